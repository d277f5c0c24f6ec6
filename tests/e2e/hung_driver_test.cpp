// A driver call that never returns (the fake driver's "hang", as a GPU fallen off the bus can leave NVML):
// `measure` still ends when the job ends, within seconds; the hung GPU is reported failed (lost) from the
// instant its call began, and the other GPU keeps its figures. Before the sampler's supervisor, the one
// sampling thread blocked in the call and `measure` never returned (the guard killed it).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "e2e_fixture.hpp"
#include "fake_config.hpp"
#include "fake_state.hpp"

namespace wattwise::e2e {
namespace {

constexpr int kEnvironment = 3;
constexpr double kJobS = 2.5;
// The sampler gives a call up after 3 s (sampling/hung_call.hpp); measure's tail and accounting add less
// than a second.
constexpr double kGiveUpS = 3.0;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class HungDriverTest : public E2eTest {
 protected:
  void hang_gpu_1(const nlohmann::json& hang) {
    auto config = two_gpu_config();
    config["gpus"][1]["hang"] = hang;
    use_config(config);
  }
  ProcessResult measure() {
    SpawnOptions options;
    options.guard = std::chrono::seconds(30);  // today's wattwise never returns: killed, the test fails
    return wattwise({"measure", "--json", path("m.json").string(), "--", "/bin/sh", "-c",
                     "sleep " + std::to_string(kJobS)},
                    options);
  }
  // What both kinds of hang must give: an end within seconds, GPU 0 whole, GPU 1 lost from `at_s`.
  void expect_hung_gpu_1(const ProcessResult& r, double earliest_at_s, double latest_at_s) {
    ASSERT_FALSE(r.killed_by_guard) << "measure never returned\n" << r.err;
    ASSERT_TRUE(r.exit_code.has_value()) << "killed by signal " << r.signal.value_or(0) << "\n" << r.err;
    EXPECT_EQ(*r.exit_code, kEnvironment) << r.err;  // the job succeeded, a GPU's figures are partial
    EXPECT_LT(r.wall_s, kJobS + kGiveUpS + 3.0) << r.err;
    EXPECT_TRUE(contains(r.err, "wattwise: warning: GPU 1 (GPU-e2e-constant) was lost at")) << r.err;
    EXPECT_TRUE(contains(r.err, "has not returned for 3.0 s")) << r.err;
    EXPECT_FALSE(contains(r.err, "warning: GPU 0 (")) << r.err;

    const auto m = read_json("m.json");
    EXPECT_FALSE(m.at("complete").get<bool>());
    const double wall_s = m.at("wall_s").get<double>();
    EXPECT_GE(wall_s, kJobS - 0.1);
    const auto& healthy = m.at("gpus").at(0);
    EXPECT_TRUE(healthy.at("complete").get<bool>()) << healthy.dump();
    EXPECT_TRUE(healthy.at("failure").is_null());
    EXPECT_EQ(healthy.at("method"), "counter");
    // The square wave (500 W and 100 W) over the whole job: sampled to its end, not to the hang.
    const double healthy_j = healthy.at("energy_j").get<double>();
    EXPECT_GT(healthy_j, 0.9 * 100 * wall_s);
    EXPECT_LT(healthy_j, 1.05 * 500 * wall_s);

    const auto& hung = m.at("gpus").at(1);
    EXPECT_FALSE(hung.at("complete").get<bool>());
    const auto& failure = hung.at("failure");
    ASSERT_TRUE(failure.is_object()) << hung.dump();
    EXPECT_TRUE(failure.at("gpu_lost").get<bool>());
    EXPECT_TRUE(contains(failure.at("error").get<std::string>(), "has not returned")) << failure.dump();
    const double at_s = failure.at("at_s").get<double>();
    EXPECT_GE(at_s, earliest_at_s) << failure.dump();
    EXPECT_LE(at_s, latest_at_s) << failure.dump();
    EXPECT_LE(failure.at("covered_s").get<double>(), std::max(at_s, 0.0) + 1e-9);
    // Its energy is the constant draw up to the hang, not over the whole job.
    if (hung.at("energy_j").is_number()) {
      EXPECT_LT(hung.at("energy_j").get<double>(), kConstantPowerW * (std::max(at_s, 0.0) + 0.2));
    }
  }
};

TEST_F(HungDriverTest, AnEnergyReadThatNeverReturnsCostsThatGpuOnlyFromTheMomentItHung) {
  // From 1 s after nvmlInit (just before the job starts) every energy read of GPU 1 blocks for good.
  hang_gpu_1({{"calls", {"nvmlDeviceGetTotalEnergyConsumption"}}, {"after_s", 1.0}});
  const auto r = measure();
  // The first energy read after the hang began is the one that hangs: up to one read interval (every 10th
  // ~100 ms posting, ~1 s) after it, plus a loaded machine's lateness (CI: 1.616 s). Before 0 on a machine
  // so slow that sampling began past 1 s.
  expect_hung_gpu_1(r, -1.0, 2.3);
}

TEST_F(HungDriverTest, ABufferedSampleFetchThatNeverReturnsAfterSomeCallsIsFoundToo) {
  // The drain (every 0.5 s or so) blocks at its 4th call on GPU 1: about a second into the job.
  hang_gpu_1({{"calls", {"nvmlDeviceGetSamples"}}, {"after_calls", 4}});
  const auto r = measure();
  expect_hung_gpu_1(r, -1.0, kJobS);
}

TEST_F(HungDriverTest, AGpuWhoseEveryCallHangsStopsNeitherTheOthersNorTheEnd) {
  // As a GPU fallen off the bus: from 1 s after nvmlInit every call to GPU 1 blocks, the job-usage poll's
  // included; set and reset calls are spared only because `measure` makes none.
  hang_gpu_1({{"after_s", 1.0}});
  const auto r = measure();
  expect_hung_gpu_1(r, -1.0, 2.3);  // the next call of any kind, however late a loaded machine runs it
}

TEST_F(HungDriverTest, ASweepEndsRestoresTheOtherGpuAndLeavesTheHungOneToTheWatchdog) {
  // Energy reads of GPU 1 block from 1.5 s after nvmlInit: inside the first run. Its set calls still
  // answer, so the watchdog, which the sweep leaves the hung GPU's journal to, can put it back.
  hang_gpu_1({{"calls", {"nvmlDeviceGetTotalEnergyConsumption"}}, {"after_s", 1.5}});
  env_["WATTWISE_STATE_DIR"] = path("state").string();
  SpawnOptions options;
  options.guard = std::chrono::seconds(40);
  const auto r = wattwise({"sweep", "--db", path("s.db").string(), "--power-limit", "300", "--repeat", "3",
                           "--", "/bin/sh", "-c", "sleep 2"},
                          options);
  ASSERT_FALSE(r.killed_by_guard) << "the sweep never ended\n" << r.err;
  ASSERT_TRUE(r.exit_code.has_value()) << "killed by signal " << r.signal.value_or(0) << "\n" << r.err;
  EXPECT_EQ(*r.exit_code, kEnvironment) << r.err;
  EXPECT_TRUE(contains(r.err, "sweep stopped after 1 runs: a GPU's driver stopped answering")) << r.err;
  EXPECT_TRUE(contains(r.err, "GPU 1 GPU-e2e-constant: NOT RESTORED: a call to its driver never returned"))
      << r.err;
  EXPECT_LT(r.wall_s, 2.0 + kGiveUpS + 10.0) << r.err;

  const auto limits_mw = [&] {
    const auto state =
        fake_nvml::read_fake_state(fake_nvml::load_fake_config(path("fake_nvml.json").string()));
    const auto limit = [&](const std::string& uuid, unsigned initial_mw) {
      const auto found = state.find(uuid);
      return found == state.end() || found->second.power_limit_mw == 0 ? initial_mw
                                                                       : found->second.power_limit_mw;
    };
    return std::pair{limit("GPU-e2e-square", 600000), limit("GPU-e2e-constant", 320000)};
  };
  // The sweep put GPU 0 back itself; the watchdog puts GPU 1 back once handed its journal.
  EXPECT_EQ(limits_mw().first, 600000u);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (limits_mw().second != 320000u && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(limits_mw().second, 320000u) << "the watchdog restored the hung GPU";
  bool journal_left = true;
  while (journal_left && std::chrono::steady_clock::now() < give_up) {
    journal_left = false;
    for (const auto& entry : std::filesystem::directory_iterator(path("state")))
      journal_left |= entry.path().filename().string().find("journal") != std::string::npos;
    if (journal_left) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(journal_left) << "the watchdog removes the journal once it has restored";
}

}  // namespace
}  // namespace wattwise::e2e
