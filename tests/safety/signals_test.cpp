#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include <algorithm>

#include "safety_support.hpp"
#include "store/results_store.hpp"

namespace wattwise::safety {
namespace {

std::vector<std::string> sweep_args(const SafetyWorld& world, const std::string& job_seconds) {
  return {"sweep", "--power-limit", "300,400,500", "--db", (world.dir() / "sweep.db").string(),
          "--",    "sleep",         job_seconds};
}

class StopSignalTest : public ::testing::TestWithParam<int> {};

// SIGINT/SIGTERM/SIGHUP while a job runs: the job gets it, wattwise restores and exits 128+N.
TEST_P(StopSignalTest, RestoresTheCapturedLimitAndExitsWith128PlusN) {
  const int signal_number = GetParam();
  SafetyWorld world;
  WattwiseProcess wattwise(world.dir(), sweep_args(world, "0.3"));
  ASSERT_TRUE(world.wait_for_journal());
  // Wait until the sweep has changed the limit: the signal then lands inside the first run.
  for (int i = 0; i < 500 && world.all_at_w(650); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_FALSE(world.all_at_w(650));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  wattwise.signal(signal_number);
  const Finished f = wattwise.wait();
  EXPECT_EQ(f.exit_code, 128 + signal_number) << f.err;
  EXPECT_NE(f.err.find("--resume"), std::string::npos) << f.err;
  EXPECT_TRUE(world.all_at_w(650));
  EXPECT_TRUE(world.journals().empty());

  // The interrupted run was not stored; --resume runs it and the rest, each planned run exactly once.
  auto resume = sweep_args(world, "0.05");
  resume.insert(resume.begin() + 1, "--resume");
  const Finished resumed = run_wattwise(world.dir(), resume);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  std::vector<std::size_t> indices;
  for (const auto& run : store::ResultsStore::open_read_only(world.dir() / "sweep.db").runs())
    indices.push_back(run.plan_index);
  std::sort(indices.begin(), indices.end());
  EXPECT_EQ(indices, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_TRUE(world.all_at_w(650));
}

INSTANTIATE_TEST_SUITE_P(Signals, StopSignalTest, ::testing::Values(SIGINT, SIGTERM, SIGHUP));

TEST(CrashingJob, IsRecordedAndTheGpusAreRestored) {
  SafetyWorld world;
  const Finished f = run_wattwise(
      world.dir(), {"sweep", "--power-limit", "300,400", "--max-failures", "1", "--db",
                    (world.dir() / "crash.db").string(), "--", "sh", "-c", "sleep 0.05; kill -SEGV $$"});
  EXPECT_EQ(f.exit_code, 1) << f.err;
  EXPECT_NE(f.err.find("--max-failures"), std::string::npos) << f.err;
  EXPECT_TRUE(world.all_at_w(650));
  EXPECT_TRUE(world.journals().empty());
}

TEST(CompletedSweep, RestoresTheSitesCapNotTheVendorDefault) {
  SafetyWorld world;
  const Finished f = run_wattwise(world.dir(), sweep_args(world, "0.05"));
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(f.out.find("results: "), std::string::npos) << f.out;
  EXPECT_TRUE(world.all_at_w(650));
  EXPECT_TRUE(world.journals().empty());
}

}  // namespace
}  // namespace wattwise::safety
