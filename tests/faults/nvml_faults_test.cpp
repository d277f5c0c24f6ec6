// NVML faults at random moments on the fake driver: UNKNOWN/TIMEOUT errors while sampling, a GPU lost
// during a measure or a sweep (and back again for `wattwise restore`), set-limit failing on one of several
// GPUs. Seeds are logged; FAULTS_SEED=N FAULTS_TRIALS=1 replays one trial.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include "invariants.hpp"

namespace wattwise::faults {
namespace {

std::vector<std::string> sweep_args(const FaultWorld& world, const std::string& mode, int ms) {
  std::vector<std::string> args = {"sweep",
                                   "--power-limit",
                                   "300,400,500",
                                   "--db",
                                   (world.dir() / "sweep.db").string(),
                                   "--trace-dir",
                                   (world.dir() / "traces").string(),
                                   "--"};
  const auto job = world.job(mode, ms);
  args.insert(args.end(), job.begin(), job.end());
  return args;
}

void report(const std::string& name, std::uint64_t seed, const Violations& v, const Finished& f) {
  record(v);
  if (!v.empty()) ADD_FAILURE() << describe(name, seed, v, f);
}

// Random UNKNOWN/TIMEOUT errors on GPU 1's reads from a random moment on: the measurement goes on without
// the failed source (or stops with a clear error), and the job is never left running.
TEST(NvmlErrorsAtRandomMoments, MeasureReportsAndLeavesNoOrphan) {
  for (int trial = 0, trials = trial_count(8); trial < trials; ++trial) {
    const std::uint64_t seed = trial_seed(7100, trial);
    std::mt19937_64 random(seed);
    auto config = two_gpu_config();
    const double after_s = 0.1 + (random() % 500) / 1000.0;
    config["gpus"][1]["errors"] = {
        {"rate", 0.05}, {"codes", {"UNKNOWN", "TIMEOUT"}}, {"seed", seed}, {"after_s", after_s}};
    FaultWorld world(config);
    const auto captured = world.gpu_settings();
    const std::string name =
        fmt::format("measure, NVML errors from {:.3f} s, trial {} seed {}", after_s, trial, seed);
    std::cout << name << std::endl;
    std::vector<std::string> args = {"measure", "--json", (world.dir() / "m.json").string(), "--"};
    const auto job = world.job("normal", 700);
    args.insert(args.end(), job.begin(), job.end());
    const Finished f = run_wattwise(world, args);
    Violations v = clear_outcome(f, {0, 3});
    if (f.exit_code == 0 && !std::filesystem::exists(world.dir() / "m.json"))
      v.push_back("exit 0 without the --json result");
    for (auto&& x : gpus_at_captured(world, captured)) v.push_back(x);
    for (auto&& x : no_orphans(world)) v.push_back(x);
    report(name, seed, v, f);
  }
}

TEST(NvmlErrorsAtRandomMoments, SweepRestoresEveryGpuAndKeepsFinishedRuns) {
  for (int trial = 0, trials = trial_count(8); trial < trials; ++trial) {
    const std::uint64_t seed = trial_seed(7200, trial);
    std::mt19937_64 random(seed);
    auto config = two_gpu_config();
    const double after_s = 0.1 + (random() % 800) / 1000.0;
    config["gpus"][1]["errors"] = {
        {"rate", 0.05}, {"codes", {"UNKNOWN", "TIMEOUT"}}, {"seed", seed}, {"after_s", after_s}};
    FaultWorld world(config);
    const auto captured = world.gpu_settings();
    const std::string name =
        fmt::format("sweep, NVML errors from {:.3f} s, trial {} seed {}", after_s, trial, seed);
    std::cout << name << std::endl;
    const Finished f = run_wattwise(world, sweep_args(world, "normal", 200));
    Violations v = clear_outcome(f, {0, 1, 3});
    for (auto&& x : gpus_at_captured(world, captured)) v.push_back(x);
    for (auto&& x : no_orphans(world)) v.push_back(x);
    for (auto&& x : runs_stored_once(world, world.dir() / "sweep.db", {true, 2, 0})) v.push_back(x);
    for (auto&& x : no_journal_left(world, f)) v.push_back(x);
    report(name, seed, v, f);
  }
}

// GPU 1 lost (for every process: the fake's lost file) at a random moment of a sweep: wattwise stops with
// a clear environment error, the healthy GPU is restored at once, the job is not left behind, the runs
// finished before are kept; when the GPU is back, `wattwise restore` puts it back too.
TEST(GpuLostAtRandomMoments, HealthyGpuRestoredAndRestoreFinishesTheLostOne) {
  for (int trial = 0, trials = trial_count(8); trial < trials; ++trial) {
    const std::uint64_t seed = trial_seed(7300, trial);
    std::mt19937_64 random(seed);
    const int lose_after_ms = 50 + static_cast<int>(random() % 800);
    auto config = two_gpu_config();
    FaultWorld world(config);
    const auto lost_file = world.dir() / "gpu1-lost";
    config["gpus"][1]["lost_while_file_exists"] = lost_file.string();
    world.write_config(config);
    const auto captured = world.gpu_settings();
    const std::string name =
        fmt::format("sweep, GPU 1 lost after {} ms, trial {} seed {}", lose_after_ms, trial, seed);
    std::cout << name << std::endl;
    Wattwise wattwise(world.dir(), sweep_args(world, "normal", 200));
    std::this_thread::sleep_for(std::chrono::milliseconds(lose_after_ms));
    std::ofstream(lost_file).put('\n');
    const Finished f = wattwise.wait();
    Violations v = clear_outcome(f, {0, 1, 3});
    for (auto&& x : gpus_at_captured(world, captured, {"GPU-fault-1"})) v.push_back(x);
    for (auto&& x : no_orphans(world)) v.push_back(x);
    for (auto&& x : runs_stored_once(world, world.dir() / "sweep.db", {true, 2, 0})) v.push_back(x);
    std::filesystem::remove(lost_file);
    const Finished restored = run_wattwise(world, {"restore"});
    for (auto&& x : clear_outcome(restored, {0})) v.push_back("restore after the GPU came back: " + x);
    for (auto&& x : gpus_at_captured(world, captured)) v.push_back("after `wattwise restore`: " + x);
    for (auto&& x : no_journal_left(world, restored)) v.push_back("after `wattwise restore`: " + x);
    report(name, seed, v, f);
  }
}

TEST(GpuLostAtRandomMoments, MeasureEndsClearlyWithoutOrphans) {
  for (int trial = 0, trials = trial_count(4); trial < trials; ++trial) {
    const std::uint64_t seed = trial_seed(7400, trial);
    std::mt19937_64 random(seed);
    auto config = two_gpu_config();
    const double lost_after_s = 0.05 + (random() % 500) / 1000.0;
    config["gpus"][0]["lost_after_s"] = lost_after_s;
    FaultWorld world(config);
    const std::string name =
        fmt::format("measure, GPU 0 lost after {:.3f} s, trial {} seed {}", lost_after_s, trial, seed);
    std::cout << name << std::endl;
    std::vector<std::string> args = {"measure", "--"};
    const auto job = world.job("normal", 700);
    args.insert(args.end(), job.begin(), job.end());
    const Finished f = run_wattwise(world, args);
    Violations v = clear_outcome(f, {0, 3});
    for (auto&& x : no_orphans(world)) v.push_back(x);
    report(name, seed, v, f);
  }
}

// The set-limit call fails on one of several GPUs: nothing is left changed on the others, no job runs on.
TEST(SetLimitFailsOnOneGpu, NoGpuLeftChanged) {
  for (unsigned failing : {1u, 2u}) {
    auto config = gpu_config(3);
    config["gpus"][failing]["set_power_limit_error"] = "UNKNOWN";
    FaultWorld world(config);
    const auto captured = world.gpu_settings();
    const std::string name = fmt::format("sweep on 3 GPUs, set-limit fails on GPU {}", failing);
    std::cout << name << std::endl;
    const Finished f = run_wattwise(world, sweep_args(world, "normal", 100));
    Violations v = clear_outcome(f, {3});
    for (auto&& x : gpus_at_captured(world, captured)) v.push_back(x);
    for (auto&& x : no_orphans(world)) v.push_back(x);
    for (auto&& x : runs_stored_once(world, world.dir() / "sweep.db", {true, 3, 0})) v.push_back(x);
    for (auto&& x : no_journal_left(world, f)) v.push_back(x);
    report(name, failing, v, f);
  }
}

}  // namespace
}  // namespace wattwise::faults
