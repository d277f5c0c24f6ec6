#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/temp_dir.hpp"
#include "fake_state.hpp"

// The world of one fault-injection trial: a fake NVML config and its persistent state, wattwise's state
// directory, a directory the job writes its pids and progress to, all below one temporary directory; and
// the real wattwise binary run against it.
namespace wattwise::faults {

// Two fake H100s at a site's cap of 650 W (vendor default 700 W), so a restore to the default is caught.
nlohmann::json two_gpu_config();
// `count` such GPUs, UUIDs GPU-fault-0, GPU-fault-1, ...
nlohmann::json gpu_config(unsigned count);

// The seed of a trial: FAULTS_SEED in the environment replays one trial (with FAULTS_TRIALS=1); else
// base + trial. Logged by every trial so a failure can be replayed.
std::uint64_t trial_seed(std::uint64_t base, int trial);
int trial_count(int default_count);

struct Finished {
  int exit_code = -1;  // 128+N when killed by signal N
  bool hung = false;   // still running at the guard time-out: killed by the test
  std::string out;
  std::string err;
};

class FaultWorld {
 public:
  explicit FaultWorld(const nlohmann::json& config = two_gpu_config());
  ~FaultWorld();
  FaultWorld(const FaultWorld&) = delete;
  FaultWorld& operator=(const FaultWorld&) = delete;

  const std::filesystem::path& dir() const { return dir_.path(); }
  std::filesystem::path state_dir() const { return dir_ / "state"; }
  std::filesystem::path job_dir() const { return dir_ / "job"; }
  std::filesystem::path config_path() const { return dir_ / "fake_nvml.json"; }
  void write_config(const nlohmann::json& config);
  const nlohmann::json& config() const { return config_; }

  // The fake driver's settings now (uuid -> settings): what the checks compare against.
  fake_nvml::FakeState gpu_settings() const;
  // The job command: fault_job JOB_DIR {power_limit_w} MODE MS.
  std::vector<std::string> job(const std::string& mode, int ms) const;

 private:
  wattwise::testing::TempDir dir_{"wattwise-faults"};
  nlohmann::json config_;
};

// wattwise started in its own process group (like a shell job), output to files in `dir`.
class Wattwise {
 public:
  // `before`: the argv that starts wattwise (e.g. setpriv ... /usr/bin/env VAR=...), none by default.
  Wattwise(const std::filesystem::path& dir, const std::vector<std::string>& args,
           const std::vector<std::string>& before = {});
  ~Wattwise();
  Wattwise(const Wattwise&) = delete;
  Wattwise& operator=(const Wattwise&) = delete;
  pid_t pid() const { return pid_; }
  void signal(int signal_number) const;
  bool running();
  // Waits for the end; past `guard` the process group is killed and `hung` set.
  Finished wait(std::chrono::milliseconds guard = std::chrono::seconds(30));

 private:
  pid_t pid_ = -1;
  std::filesystem::path out_, err_;
  std::optional<int> status_;
};

Finished run_wattwise(const FaultWorld& world, const std::vector<std::string>& args);

}  // namespace wattwise::faults
