#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safety_support.hpp"

namespace wattwise::safety {
namespace {

TEST(SecondWattwise, OnTheSameGpuIsRefusedWithTheHoldersPid) {
  SafetyWorld world;
  WattwiseProcess first(world.dir(), {"sweep", "--power-limit", "300", "--db",
                                      (world.dir() / "first.db").string(), "--", "sleep", "0.6"});
  ASSERT_TRUE(world.wait_for_journal());
  const Finished second = run_wattwise(world.dir(), {"sweep", "--power-limit", "400", "--db",
                                                     (world.dir() / "second.db").string(), "--", "true"});
  EXPECT_EQ(second.exit_code, 3) << second.err;
  EXPECT_NE(second.err.find("GPU-safe-aaaa"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find(std::to_string(first.pid())), std::string::npos) << second.err;
  EXPECT_EQ(first.wait().exit_code, 0);
  EXPECT_TRUE(world.all_at_w(650));
}

TEST(NoPermission, FailsBeforeAnyRunWithWhatIsMissing) {
  auto config = two_capped_gpus();
  config["controls_error"] = "NO_PERMISSION";
  SafetyWorld world(config);
  const auto db = world.dir() / "p.db";
  const Finished f =
      run_wattwise(world.dir(), {"sweep", "--power-limit", "300", "--db", db.string(), "--", "touch", "ran"});
  EXPECT_EQ(f.exit_code, 3) << f.err;
  EXPECT_NE(f.err.find("power limit"), std::string::npos) << f.err;
  // Item 14 (failed before: root was told to run as root, with sudo).
  if (::geteuid() == 0) {
    EXPECT_EQ(f.err.find("sudo"), std::string::npos) << f.err;
    EXPECT_NE(f.err.find("container"), std::string::npos) << f.err;
  } else {
    EXPECT_NE(f.err.find("as root"), std::string::npos) << f.err;
  }
  EXPECT_FALSE(std::filesystem::exists(db));
  EXPECT_FALSE(std::filesystem::exists(world.dir() / "ran"));
  EXPECT_TRUE(world.all_at_w(650));
}

// Issue 10 item 4. Failed before: a state directory that anyone could write was used as it was.
TEST(UnsafeStateDir, IsRefusedBeforeAnyChangeWithTheFix) {
  SafetyWorld world;
  std::filesystem::create_directories(world.state_dir());
  ASSERT_EQ(::chmod(world.state_dir().c_str(), 0777), 0);
  const auto db = world.dir() / "u.db";
  const Finished f =
      run_wattwise(world.dir(), {"sweep", "--power-limit", "300", "--db", db.string(), "--", "touch", "ran"});
  EXPECT_EQ(f.exit_code, 3) << f.err;
  EXPECT_NE(f.err.find("chmod go-w"), std::string::npos) << f.err;
  EXPECT_FALSE(std::filesystem::exists(world.dir() / "ran"));
  EXPECT_TRUE(world.all_at_w(650));
  EXPECT_TRUE(world.journals().empty());
}

TEST(OutOfRange, FailsBeforeAnyRunNamingTheRange) {
  SafetyWorld world;
  const auto db = world.dir() / "r.db";
  const Finished f =
      run_wattwise(world.dir(), {"sweep", "--power-limit", "100:300:100", "--db", db.string(), "--", "true"});
  EXPECT_EQ(f.exit_code, 2) << f.err;
  EXPECT_NE(f.err.find("200-700 W"), std::string::npos) << f.err;
  EXPECT_FALSE(std::filesystem::exists(db));
  EXPECT_TRUE(world.all_at_w(650));
  EXPECT_TRUE(world.journals().empty());
}

TEST(ReadOnly, RefusesHardwareKnobsAndRunsJobKnobsWithoutAJournal) {
  SafetyWorld world;
  const Finished refused = run_wattwise(world.dir(), {"sweep", "--read-only", "--power-limit", "300", "--db",
                                                      (world.dir() / "ro1.db").string(), "--", "true"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("--read-only"), std::string::npos) << refused.err;
  const Finished jobs =
      run_wattwise(world.dir(), {"sweep", "--read-only", "--param", "batch=1,2", "--db",
                                 (world.dir() / "ro2.db").string(), "--", "sleep", "0.0{batch}"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_FALSE(std::filesystem::exists(world.state_dir() / "settings-journal"));
  EXPECT_TRUE(world.journals().empty());
  EXPECT_TRUE(world.all_at_w(650));
}

TEST(DryRun, PrintsTheChangesAndTouchesNothing) {
  SafetyWorld world;
  const auto db = world.dir() / "dry.db";
  const Finished f = run_wattwise(world.dir(), {"sweep", "--power-limit", "300,400", "--dry-run", "--db",
                                                db.string(), "--", "touch", "ran"});
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(f.out.find("power limit 650 W -> 300 W"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("restore: power limit 400 W -> 650 W"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("settings: changed by this process as root"), std::string::npos) << f.out;
  EXPECT_FALSE(std::filesystem::exists(db));
  EXPECT_FALSE(std::filesystem::exists(world.dir() / "ran"));
  EXPECT_FALSE(std::filesystem::exists(world.state_dir()));
}

}  // namespace
}  // namespace wattwise::safety
