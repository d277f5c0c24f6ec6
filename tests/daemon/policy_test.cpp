#include "daemon/policy.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"

namespace wattwise::daemon {
namespace {

constexpr const char* kPolicy = R"({
  "format": 1,
  "comment": "two grants",
  "rules": [
    {"users": ["alice", "1001"], "gpus": [0, 1], "power_limit_w": {"min": 200, "max": 700},
     "sm_clock_mhz": {"min": 900}},
    {"groups": ["ml"], "power_limit_w": {"max": 400}}
  ]
})";

Peer peer(const std::string& user, uid_t uid, std::vector<std::string> groups = {}) {
  Peer p;
  p.user = user;
  p.uid = uid;
  p.gid = uid;
  p.pid = 4242;
  p.groups = std::move(groups);
  return p;
}

TEST(DaemonPolicy, GrantsUsersAndGroupsTheirKnobsOnTheirGpusWithinTheirRanges) {
  const Policy policy = parse_policy(kPolicy, "/etc/wattwise/policy.json");
  ASSERT_EQ(policy.rules.size(), 2u);
  const Peer alice = peer("alice", 1000);
  EXPECT_FALSE(policy_refusal(policy, alice, 0, Knob::kPowerLimitW, 300));
  EXPECT_FALSE(policy_refusal(policy, alice, 1, Knob::kPowerLimitW, 700));
  EXPECT_FALSE(policy_refusal(policy, alice, 1, Knob::kSmClockMhz, 900));
  EXPECT_FALSE(policy_refusal(policy, peer("1001", 1001), 0, Knob::kPowerLimitW, 300));  // by uid

  const auto below = policy_refusal(policy, alice, 0, Knob::kPowerLimitW, 150);
  ASSERT_TRUE(below);
  EXPECT_EQ(*below,
            "the policy /etc/wattwise/policy.json (rules[0]) lets alice set power_limit_w on GPU 0 only within "
            "200-700 W, not 150 W");
  const auto other_gpu = policy_refusal(policy, alice, 2, Knob::kPowerLimitW, 300);
  ASSERT_TRUE(other_gpu);
  EXPECT_NE(other_gpu->find("on other GPUs, not on GPU 2"), std::string::npos) << *other_gpu;
  const auto clock = policy_refusal(policy, alice, 0, Knob::kSmClockMhz, 600);
  ASSERT_TRUE(clock);
  EXPECT_NE(clock->find(">= 900 MHz, not 600 MHz"), std::string::npos) << *clock;
  const auto memory = policy_refusal(policy, alice, 0, Knob::kMemClockMhz, 1593);
  ASSERT_TRUE(memory);
  EXPECT_NE(memory->find("no rule that lets alice set mem_clock_mhz"), std::string::npos) << *memory;

  const Peer bob = peer("bob", 1002, {"ml", "2000"});
  EXPECT_FALSE(policy_refusal(policy, bob, 7, Knob::kPowerLimitW, 400));  // every GPU
  EXPECT_TRUE(policy_refusal(policy, bob, 7, Knob::kPowerLimitW, 401));
  EXPECT_TRUE(policy_refusal(policy, peer("eve", 1003), 0, Knob::kPowerLimitW, 300));
  EXPECT_FALSE(policy_refusal(policy, peer("root", 0), 5, Knob::kMemClockMhz, 1593));  // root: everything

  EXPECT_EQ(describe_allowed(policy, bob), "power_limit_w <= 400 W on every GPU");
  EXPECT_EQ(describe_allowed(policy, alice),
            "power_limit_w 200-700 W on GPU 0,1; sm_clock_mhz >= 900 MHz on GPU 0,1");
  EXPECT_NE(describe_allowed(policy, peer("eve", 1003)).find("grants eve no knob"), std::string::npos);
}

TEST(DaemonPolicy, AnInvalidPolicyIsRefusedWholeNamingTheField) {
  struct Case {
    const char* text;
    const char* names;
  };
  for (const Case& c : {
           Case{R"({"rules": []})", "format"},
           Case{R"({"format": 2, "rules": []})", "format"},
           Case{R"({"format": 1, "rules": [{"users": ["a"], "power_limit_w": {"min": 300, "max": 200}}]})",
                "rules[0].power_limit_w has min above max"},
           Case{R"({"format": 1, "rules": [{"users": ["a"], "power_limt_w": {"max": 200}}]})",
                "rules[0].power_limt_w is not a field"},
           Case{R"({"format": 1, "rules": [{"power_limit_w": {"max": 200}}]})", "names no users"},
           Case{R"({"format": 1, "rules": [{"users": ["a"]}]})", "grants no knob"},
           Case{R"({"format": 1, "rules": [{"users": ["a"], "gpus": [-1], "power_limit_w": {}}]})",
                "rules[0].gpus"},
           Case{R"({"format": 1, "rules": [{"users": [""], "power_limit_w": {}}]})", "rules[0].users"},
           Case{R"({"format": 1, "rules": [{"users": ["a"], "power_limit_w": {"min": "200"}}]})",
                "power_limit_w.min must be a number"},
           Case{R"({"format": 1, "job_owner": {"dir": "relative"}})", "job_owner.dir"},
           Case{R"({"format": 1, "jobowner": {}})", "jobowner is not a field"},
           Case{R"({"format": 1, "rules": [)", "not valid JSON"},
       }) {
    try {
      parse_policy(c.text, "p.json");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kData);
      EXPECT_NE(std::string(e.what()).find(c.names), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("p.json"), std::string::npos) << e.what();
    }
  }
}

class JobOwnerRuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the owner files must be root's: run as root";
    dir_.emplace("wattwise-owner");
    policy_ =
        parse_policy(R"({"format": 1, "job_owner": {"dir": ")" + dir_->path().string() + R"("}})", "p.json");
  }
  void write_owner(unsigned gpu, const std::string& text, mode_t mode = 0644) {
    const auto path = *dir_ / ("gpu" + std::to_string(gpu));
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
  }
  std::optional<wattwise::testing::TempDir> dir_;  // made in SetUp, after the root check
  Policy policy_;
};

TEST_F(JobOwnerRuleTest, OnlyTheOwnerOfTheJobHoldingTheGpuMayChangeIt) {
  write_owner(0, "alice 4242\n");
  write_owner(1, "1002\n");
  EXPECT_FALSE(job_owner_refusal(policy_, peer("alice", 1000), 0));
  EXPECT_FALSE(job_owner_refusal(policy_, peer("bob", 1002), 1));  // by uid
  const auto other = job_owner_refusal(policy_, peer("bob", 1002), 0);
  ASSERT_TRUE(other);
  EXPECT_EQ(*other, "GPU 0 is held by job 4242 of alice, not bob: only the owner of the job that holds a GPU may "
                    "change it");
  const auto none = job_owner_refusal(policy_, peer("alice", 1000), 2);
  ASSERT_TRUE(none);
  EXPECT_NE(none->find("no job holds GPU 2"), std::string::npos) << *none;
  // A file others could have written is not trusted, even when it names the asker.
  write_owner(3, "alice\n", 0666);
  const auto planted = job_owner_refusal(policy_, peer("alice", 1000), 3);
  ASSERT_TRUE(planted);
  EXPECT_NE(planted->find("not trusted"), std::string::npos) << *planted;
  // A link is not followed.
  std::filesystem::create_symlink(*dir_ / "gpu0", *dir_ / "gpu4");
  EXPECT_TRUE(job_owner_refusal(policy_, peer("alice", 1000), 4));
}

}  // namespace
}  // namespace wattwise::daemon
