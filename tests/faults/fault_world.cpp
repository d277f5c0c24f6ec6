#include "fault_world.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "fake_config.hpp"
#include "start_in_own_group.hpp"

namespace wattwise::faults {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

nlohmann::json gpu_config(unsigned count) {
  nlohmann::json gpus = nlohmann::json::array();
  for (unsigned i = 0; i < count; ++i) {
    gpus.push_back(
        {{"uuid", "GPU-fault-" + std::to_string(i)},
         {"power_limit_w", {{"min", 200}, {"max", 700}, {"default", 700}, {"initial", 650}}},
         {"profile", {{{"duration_s", 0.5}, {"watts", 400}}, {{"duration_s", 0.5}, {"watts", 150}}}}});
  }
  return {{"driver_version", "580.159.04"}, {"gpus", gpus}};
}

nlohmann::json two_gpu_config() {
  return gpu_config(2);
}

std::uint64_t trial_seed(std::uint64_t base, int trial) {
  if (const char* seed = std::getenv("FAULTS_SEED")) return std::stoull(seed);
  return base + static_cast<std::uint64_t>(trial);
}

int trial_count(int default_count) {
  if (const char* trials = std::getenv("FAULTS_TRIALS")) return std::stoi(trials);
  return default_count;
}

FaultWorld::FaultWorld(const nlohmann::json& config) {
  std::filesystem::create_directories(job_dir());
  write_config(config);
  ::setenv("WATTWISE_FAKE_NVML_CONFIG", config_path().c_str(), 1);
  ::setenv("WATTWISE_NVML_LIB", FAKE_NVML_PATH, 1);
  ::setenv("WATTWISE_STATE_DIR", state_dir().c_str(), 1);
  // The job's marker socket directory, inside the trial's directory.
  ::setenv("TMPDIR", dir().c_str(), 1);
}

FaultWorld::~FaultWorld() {
  ::unsetenv("WATTWISE_FAKE_NVML_CONFIG");
  ::unsetenv("WATTWISE_NVML_LIB");
  ::unsetenv("WATTWISE_STATE_DIR");
  ::unsetenv("TMPDIR");
}  // dir_ goes after: its tree is removed once nothing names it

void FaultWorld::write_config(const nlohmann::json& config) {
  config_ = config;
  const auto temp = config_path().string() + ".tmp";
  std::ofstream(temp) << config.dump(2);
  std::filesystem::rename(temp, config_path());
}

fake_nvml::FakeState FaultWorld::gpu_settings() const {
  return fake_nvml::read_fake_state(fake_nvml::load_fake_config(config_path().string()));
}

std::vector<std::string> FaultWorld::job(const std::string& mode, int ms) const {
  return {FAULT_JOB, job_dir().string(), "{power_limit_w}", mode, std::to_string(ms)};
}

Wattwise::Wattwise(const std::filesystem::path& dir, const std::vector<std::string>& args,
                   const std::vector<std::string>& before) {
  static int counter = 0;
  const std::string stem = "wattwise-" + std::to_string(++counter);
  out_ = dir / (stem + ".out");
  err_ = dir / (stem + ".err");
  std::vector<std::string> argv = before;
  argv.push_back(WATTWISE_BIN);
  argv.insert(argv.end(), args.begin(), args.end());
  pid_ = safety::start_in_own_group(argv, out_, err_);
}

Wattwise::~Wattwise() {
  if (!status_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

void Wattwise::signal(int signal_number) const {
  ::kill(pid_, signal_number);
}

bool Wattwise::running() {
  if (status_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
  return !status_;
}

Finished Wattwise::wait(std::chrono::milliseconds guard) {
  Finished f;
  const auto deadline = std::chrono::steady_clock::now() + guard;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      f.hung = true;
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      status_ = status;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  f.exit_code = WIFEXITED(*status_) ? WEXITSTATUS(*status_) : 128 + WTERMSIG(*status_);
  f.out = read_file(out_);
  f.err = read_file(err_);
  return f;
}

Finished run_wattwise(const FaultWorld& world, const std::vector<std::string>& args) {
  Wattwise w(world.dir(), args);
  return w.wait();
}

}  // namespace wattwise::faults
