// Jobs with bad habits under `wattwise measure` (no GPU setting changes): crash, ignore SIGTERM, fork a
// background child, exit 0 on SIGINT. wattwise must pass the job's outcome on, stop it when asked (with
// escalation to SIGKILL), and leave no process of the job behind.
#include <gtest/gtest.h>
#include <signal.h>

#include <iostream>
#include <thread>

#include "invariants.hpp"

namespace wattwise::faults {
namespace {

Finished measure(const FaultWorld& world, const std::string& mode, int ms,
                 std::vector<std::string> extra = {}, int signal_number = 0, int signal_after_ms = 0) {
  std::vector<std::string> args = {"measure"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("--");
  const auto job = world.job(mode, ms);
  args.insert(args.end(), job.begin(), job.end());
  Wattwise wattwise(world.dir(), args);
  if (signal_number != 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(signal_after_ms));
    wattwise.signal(signal_number);
  }
  return wattwise.wait(std::chrono::seconds(20));
}

void check(const std::string& name, const Finished& f, Violations v) {
  std::cout << name << std::endl;
  record(v);
  if (!v.empty()) ADD_FAILURE() << describe(name, 0, v, f);
}

TEST(BadJobs, CrashingJobIsReportedWithItsSignal) {
  FaultWorld world;
  const Finished f = measure(world, "crash", 300);
  Violations v = clear_outcome(f, {128 + SIGSEGV}, {128 + SIGSEGV});
  for (auto&& x : no_orphans(world)) v.push_back(x);
  check("measure, job crashes with SIGSEGV", f, v);
}

TEST(BadJobs, JobIgnoringSigtermIsStoppedByTheTimeout) {
  FaultWorld world;
  const Finished f = measure(world, "ignore_term", 15000, {"--timeout", "0.5"});
  Violations v = clear_outcome(f, {124, 128 + SIGTERM, 128 + SIGKILL}, {124, 128 + SIGTERM, 128 + SIGKILL});
  for (auto&& x : no_orphans(world)) v.push_back(x);
  check("measure --timeout 0.5, job ignores SIGTERM", f, v);
}

TEST(BadJobs, JobIgnoringSigtermIsStoppedBySigtermToWattwise) {
  FaultWorld world;
  const Finished f = measure(world, "ignore_term", 15000, {}, SIGTERM, 400);
  Violations v = clear_outcome(f, {128 + SIGTERM});
  for (auto&& x : no_orphans(world)) v.push_back(x);
  check("measure, SIGTERM to wattwise, job ignores SIGTERM", f, v);
}

TEST(BadJobs, BackgroundChildOfTheJobIsNotLeftBehind) {
  FaultWorld world;
  const Finished f = measure(world, "daemon", 300);
  Violations v = clear_outcome(f, {0});
  for (auto&& x : no_orphans(world)) v.push_back(x);
  check("measure, job leaves a background child in its process group", f, v);
}

TEST(BadJobs, JobThatExitsZeroOnSigintIsReportedAsStopped) {
  FaultWorld world;
  const Finished f = measure(world, "exit0_on_int", 15000, {}, SIGINT, 400);
  Violations v = clear_outcome(f, {128 + SIGINT});
  for (auto&& x : no_orphans(world)) v.push_back(x);
  check("measure, SIGINT, job exits 0 on it", f, v);
}

// A sweep whose job exits 0 on SIGTERM (a checkpointing SLURM job): the cut run is not stored as a success,
// the sweep stops with 128+15, and --resume runs it again.
TEST(BadJobs, SweepStopsWhenTheJobHandlesTheStopSignal) {
  FaultWorld world;
  const auto captured = world.gpu_settings();
  const auto db = world.dir() / "sweep.db";
  std::vector<std::string> args = {"sweep",
                                   "--power-limit",
                                   "300,400",
                                   "--db",
                                   db.string(),
                                   "--trace-dir",
                                   (world.dir() / "traces").string(),
                                   "--"};
  const auto job = world.job("exit0_on_int", 15000);
  args.insert(args.end(), job.begin(), job.end());
  Wattwise wattwise(world.dir(), args);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  wattwise.signal(SIGTERM);
  const Finished f = wattwise.wait(std::chrono::seconds(20));
  Violations v = clear_outcome(f, {128 + SIGTERM});
  for (auto&& x : gpus_at_captured(world, captured)) v.push_back(x);
  for (auto&& x : no_orphans(world)) v.push_back(x);
  for (auto&& x : runs_stored_once(world, db, {true, 2, 0})) v.push_back(x);
  check("sweep, SIGTERM, job exits 0 on it", f, v);
}

}  // namespace
}  // namespace wattwise::faults
