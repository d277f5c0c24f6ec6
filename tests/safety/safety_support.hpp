#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/temp_dir.hpp"

namespace wattwise::safety {

// Two fake H100s that start at a site's cap of 650 W (vendor default 700 W): a restore to the default
// would be as wrong as no restore at all.
nlohmann::json two_capped_gpus();

// A fresh world per test: the fake NVML config and state, wattwise's state directory, all in a temporary
// directory, and the environment that points the wattwise binary at them.
class SafetyWorld {
 public:
  explicit SafetyWorld(const nlohmann::json& config = two_capped_gpus());
  ~SafetyWorld();
  SafetyWorld(const SafetyWorld&) = delete;
  SafetyWorld& operator=(const SafetyWorld&) = delete;

  const std::filesystem::path& dir() const { return dir_.path(); }
  std::filesystem::path state_dir() const { return dir_ / "state"; }
  void write_config(const nlohmann::json& config);

  // uuid -> the power limit the fake driver holds now, W.
  std::map<std::string, double> limits_w() const;
  bool all_at_w(double watts) const;
  // Polls until every GPU is at `watts` and no process holds a GPU lock (a watchdog has finished), or
  // `timeout` passes. True when restored.
  bool wait_restored(double watts, std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;
  std::vector<std::filesystem::path> journals() const;
  bool wait_for_journal(std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;

 private:
  wattwise::testing::TempDir dir_{"wattwise-safety"};
  std::filesystem::path config_path_;
};

struct Finished {
  int exit_code = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// The wattwise binary started with `args`, its output going to files.
class WattwiseProcess {
 public:
  WattwiseProcess(const std::filesystem::path& dir, const std::vector<std::string>& args);
  ~WattwiseProcess();
  pid_t pid() const { return pid_; }
  // The forked watchdog: wattwise's child that leads its own session. nullopt until it exists.
  std::optional<pid_t> watchdog_pid() const;
  void signal(int signal_number) const;
  Finished wait();

 private:
  pid_t pid_ = -1;
  std::filesystem::path out_, err_;
  bool reaped_ = false;
};

// Runs wattwise to the end.
Finished run_wattwise(const std::filesystem::path& dir, const std::vector<std::string>& args);

}  // namespace wattwise::safety
