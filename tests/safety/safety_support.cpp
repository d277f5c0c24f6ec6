#include "safety_support.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "fake_config.hpp"
#include "fake_state.hpp"
#include "safety/gpu_lock.hpp"
#include "safety/journal.hpp"
#include "start_in_own_group.hpp"

namespace wattwise::safety {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// /proc/<pid>/stat fields after the command name: state ppid pgrp session ...
struct ProcStat {
  pid_t ppid = 0;
  pid_t session = 0;
};

std::optional<ProcStat> proc_stat(pid_t pid) {
  const std::string text = read_file(std::filesystem::path("/proc") / std::to_string(pid) / "stat");
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(text.substr(close + 2));
  char state = 0;
  ProcStat s;
  pid_t pgrp = 0;
  in >> state >> s.ppid >> pgrp >> s.session;
  if (!in) return std::nullopt;
  return s;
}

}  // namespace

nlohmann::json two_capped_gpus() {
  nlohmann::json gpus = nlohmann::json::array();
  for (const char* uuid : {"GPU-safe-aaaa", "GPU-safe-bbbb"}) {
    gpus.push_back({{"uuid", uuid},
                    {"power_limit_w", {{"min", 200}, {"max", 700}, {"default", 700}, {"initial", 650}}},
                    {"profile", {{{"duration_s", 1.0}, {"watts", 300}}}}});
  }
  return {{"driver_version", "580.159.04"}, {"gpus", gpus}};
}

SafetyWorld::SafetyWorld(const nlohmann::json& config) {
  config_path_ = dir_ / "fake_nvml.json";
  write_config(config);
  ::setenv("WATTWISE_FAKE_NVML_CONFIG", config_path_.c_str(), 1);
  ::setenv("WATTWISE_NVML_LIB", FAKE_NVML_PATH, 1);
  ::setenv("WATTWISE_STATE_DIR", state_dir().c_str(), 1);
}

SafetyWorld::~SafetyWorld() {
  ::unsetenv("WATTWISE_FAKE_NVML_CONFIG");
  ::unsetenv("WATTWISE_NVML_LIB");
  ::unsetenv("WATTWISE_STATE_DIR");
}  // dir_ goes after: its tree is removed once nothing names it

void SafetyWorld::write_config(const nlohmann::json& config) {
  const auto temp = config_path_.string() + ".tmp";
  std::ofstream(temp) << config.dump(2);
  std::filesystem::rename(temp, config_path_);
}

std::map<std::string, double> SafetyWorld::limits_w() const {
  const auto config = fake_nvml::load_fake_config(config_path_.string());
  std::map<std::string, double> limits;
  const auto state = fake_nvml::read_fake_state(config);
  for (const auto& gpu : config.gpus) {
    const auto found = state.find(gpu.uuid);
    limits[gpu.uuid] = found != state.end() ? found->second.power_limit_mw / 1000.0 : gpu.initial_limit_w;
  }
  return limits;
}

bool SafetyWorld::all_at_w(double watts) const {
  for (const auto& [uuid, limit] : limits_w()) {
    if (limit != watts) return false;
  }
  return true;
}

bool SafetyWorld::wait_restored(double watts, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto config = fake_nvml::load_fake_config(config_path_.string());
  while (true) {
    bool locked = false;
    for (const auto& gpu : config.gpus) locked = locked || safety::gpu_lock_holder(state_dir(), gpu.uuid);
    if (!locked && all_at_w(watts)) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::vector<std::filesystem::path> SafetyWorld::journals() const {
  return safety::find_journals(state_dir());
}

bool SafetyWorld::wait_for_journal(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (journals().empty()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

WattwiseProcess::WattwiseProcess(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  static int counter = 0;
  const std::string stem = "wattwise-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  out_ = dir / (stem + ".out");
  err_ = dir / (stem + ".err");
  std::vector<std::string> argv{WATTWISE_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_ = start_in_own_group(argv, out_, err_);
}

WattwiseProcess::~WattwiseProcess() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::optional<pid_t> WattwiseProcess::watchdog_pid() const {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    const auto stat = proc_stat(pid);
    if (stat && stat->ppid == pid_ && stat->session == pid) return pid;
  }
  return std::nullopt;
}

void WattwiseProcess::signal(int signal_number) const {
  ::kill(pid_, signal_number);
}

Finished WattwiseProcess::wait() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  Finished f;
  f.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  f.out = read_file(out_);
  f.err = read_file(err_);
  return f;
}

Finished run_wattwise(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  WattwiseProcess p(dir, args);
  return p.wait();
}

}  // namespace wattwise::safety
