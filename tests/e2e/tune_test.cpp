// `wattwise tune` end to end: the real binary, the fake NVML (whose power limits persist in its state file,
// so the test sees what wattwise set and what was restored) and a Python job marking its iterations.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <set>
#include <thread>

#include "e2e_fixture.hpp"
#include "fake_state.hpp"

namespace wattwise::e2e {
namespace {

constexpr unsigned kCapturedLimitMw = 650000;

class TuneTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    // One GPU drawing 400 W: a cap below that saves energy at the same iteration time, so the tuner moves.
    config_ = {{"driver_version", "580.159.04"},
               {"state_file", path("fake_state.json").string()},
               {"gpus",
                {{{"name", "NVIDIA H100 80GB HBM3"},
                  {"uuid", "GPU-tune-0"},
                  {"pci_bus_id", "00000000:19:00.0"},
                  {"power_limit_w", {{"min", 200}, {"max", 700}, {"default", 700}, {"initial", 650}}},
                  {"profile", {{{"duration_s", 1.0}, {"watts", 400}}}}}}}};
    use_config(config_);
    env_["WATTWISE_STATE_DIR"] = path("state").string();
  }

  // The limit the fake driver holds now (the configured one until something set it).
  unsigned limit_mw() const {
    const auto state = fake_nvml::read_fake_state(fake_nvml::load_fake_config(path("fake_nvml.json")));
    const auto found = state.find("GPU-tune-0");
    return found == state.end() ? kCapturedLimitMw : found->second.power_limit_mw;
  }

  std::vector<std::string> job(double seconds, int iteration_ms, const std::string& mode) const {
    return {PYTHON3,
            std::string(E2E_JOBS_DIR) + "/tune_job.py",
            std::to_string(seconds),
            std::to_string(iteration_ms),
            mode,
            dir_.string()};
  }

  // Runs `wattwise tune ARGS -- JOB`, noting every limit the fake held while it ran.
  ProcessResult tune(std::vector<std::string> args, const std::vector<std::string>& job_argv,
                     std::function<void(int pid)> also = {}) {
    args.insert(args.begin(), "tune");
    args.push_back("--");
    args.insert(args.end(), job_argv.begin(), job_argv.end());
    SpawnOptions options;
    options.guard = std::chrono::seconds(50);
    auto last = std::chrono::steady_clock::now();
    options.while_running = [&, also](int pid) {
      if (std::chrono::steady_clock::now() - last > std::chrono::milliseconds(50)) {
        limits_seen_.insert(limit_mw());
        last = std::chrono::steady_clock::now();
      }
      if (also) also(pid);
    };
    return wattwise(args, options);
  }

  // Whether the GPU was seen holding a limit other than the captured one. (Not "more than one limit seen":
  // the first look, 50 ms in, may already find the start value the tuner set before the job began, and the
  // restore at the end may come and go between two looks.)
  bool saw_a_change() const {
    return std::any_of(limits_seen_.begin(), limits_seen_.end(),
                       [](unsigned mw) { return mw != kCapturedLimitMw; });
  }

  bool journal_left() const {
    if (!std::filesystem::exists(path("state"))) return false;
    for (const auto& entry : std::filesystem::directory_iterator(path("state")))
      if (entry.path().filename().string().rfind("settings-journal", 0) == 0) return true;
    return false;
  }

  nlohmann::json config_;
  std::set<unsigned> limits_seen_;
};

TEST_F(TuneTest, ChangesTheLimitWhileTheJobRunsAndRestoresItAfterANormalExit) {
  // A short stationarity window: the fake GPU draws the same from the start, and the job is short.
  const auto r =
      tune({"--json", path("tune.json").string(), "--range", "250:450", "--stationary-window", "1"},
           job(10, 40, "ok"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = read_json("tune.json");
  ASSERT_FALSE(j.at("decisions").empty()) << r.err;
  const auto& changes = j.at("tuning").at("changes");
  ASSERT_FALSE(changes.empty());
  // What the tuner decided is what the GPU held: every limit seen during the run was the captured one or
  // one of the changes, and the first change was seen.
  std::set<unsigned> decided = {kCapturedLimitMw};
  for (const auto& c : changes) {
    const double w = c.at("value").get<double>();
    EXPECT_GE(w, 250);
    EXPECT_LE(w, 450);
    decided.insert(static_cast<unsigned>(w * 1000));
  }
  for (unsigned mw : limits_seen_) EXPECT_TRUE(decided.contains(mw)) << mw << " mW was never decided";
  EXPECT_TRUE(saw_a_change()) << "no change was seen on the GPU";
  EXPECT_EQ(limit_mw(), kCapturedLimitMw);  // restored
  EXPECT_FALSE(journal_left()) << "the journal is removed after a complete restore";
  EXPECT_EQ(j.at("dry_run"), false);
  EXPECT_TRUE(j.at("profiling_iterations").is_number());
  EXPECT_TRUE(j.contains("settled"));
  EXPECT_GT(j.at("tuning").at("iterations_seen").get<int>(), 100);
  // The job saw the state: the knob, and the setting in force at its end.
  const auto state = read_json("tuning_state.json");
  ASSERT_TRUE(state.is_object());
  EXPECT_EQ(state.at("knob"), "power-limit");
  EXPECT_EQ(state.at("captured_value").get<double>(), 650);
  // The captured 650 W lies outside --range 250:450: the search started from 450 W, applied first.
  EXPECT_EQ(j.at("tuning").at("start_value").get<double>(), 450);
  EXPECT_EQ(changes[0].at("value").get<double>(), 450);
  // Every decision names the setting its estimate is of: the baseline's is the start value, every one a
  // candidate of the range; the summary's table shows it before the setting held next.
  const auto& decisions = j.at("decisions");
  EXPECT_EQ(decisions[0].at("estimate_of").get<double>(), 450) << decisions.dump();
  for (const auto& d : decisions) {
    EXPECT_GE(d.at("estimate_of").get<double>(), 250) << d.dump();
    EXPECT_LE(d.at("estimate_of").get<double>(), 450) << d.dump();
  }
  EXPECT_NE(r.err.find("measured  estimate"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("then holds  reason"), std::string::npos) << r.err;
}

TEST_F(TuneTest, SettlesAndSaysSoInTheJson) {
  // A narrow range and short iterations: the search ends well within the job.
  const auto r =
      tune({"--json", path("tune.json").string(), "--range", "300:400", "--stationary-window", "1"},
           job(14, 25, "ok"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = read_json("tune.json");
  ASSERT_TRUE(j.at("settled").is_object()) << r.err;
  const double settled_w = j.at("settled").at("power_limit_w").get<double>();
  EXPECT_GE(settled_w, 300);
  EXPECT_LE(settled_w, 400);
  // The first settle is the one `settled` names (a drift seen later may start the search again).
  bool settle_named = false;
  for (const auto& d : j.at("decisions"))
    if (d.at("kind") == "settle") {
      settle_named = d.at("power_limit_w").get<double>() == settled_w;
      break;
    }
  EXPECT_TRUE(settle_named) << j.at("decisions").dump();
  EXPECT_TRUE(limits_seen_.contains(static_cast<unsigned>(settled_w * 1000)));
  EXPECT_EQ(limit_mw(), kCapturedLimitMw);
  EXPECT_TRUE(j.at("tuning").at("budget_tolerance").is_null()) << "no budget, no tolerance";
  // The probe caps, so that the decisions' iteration counts can be read from the result alone.
  EXPECT_EQ(j.at("tuning").at("max_probe_iterations").get<int>(), 15);
  EXPECT_EQ(j.at("tuning").at("search_probe_iterations").get<int>(), 11);
}

TEST_F(TuneTest, ASlowdownBudgetSaysHowCloselyItIsKeptInTheSummaryAndTheJson) {
  const auto r = tune({"--json", path("tune.json").string(), "--range", "300:400", "--stationary-window", "1",
                       "--max-slowdown", "10%"},
                      job(14, 25, "ok"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("max slowdown 10.0% (kept to within 0.15% of its time)"), std::string::npos) << r.err;
  const auto tuning = read_json("tune.json").at("tuning");
  EXPECT_DOUBLE_EQ(tuning.at("max_slowdown").get<double>(), 0.10);
  EXPECT_DOUBLE_EQ(tuning.at("budget_tolerance").get<double>(), 0.0015);
  EXPECT_EQ(limit_mw(), kCapturedLimitMw);
}

TEST_F(TuneTest, RestoresTheLimitAfterTheJobCrashes) {
  // The job crashes one second after the tuner first holds a limit other than the captured one (a fixed
  // crash time raced the search on a loaded machine: it crashed before any change, and the test proved
  // nothing); a short stationarity window keeps that early.
  const auto r =
      tune({"--range", "250:450", "--stationary-window", "1"}, job(30, 40, "crash-after-change"));
  EXPECT_EQ(r.exit_code, 128 + SIGABRT) << r.err;
  EXPECT_TRUE(saw_a_change()) << r.err;
  EXPECT_EQ(limit_mw(), kCapturedLimitMw);
}

TEST_F(TuneTest, TheWatchdogRestoresTheLimitAfterWattwiseIsKilled) {
  bool killed = false;
  // Killed in the middle of the search: at the first limit the tuner chose (not the start's 450 W, which
  // --range makes it apply before the first iteration).
  const auto r = tune({"--range", "250:450", "--stationary-window", "1"}, job(30, 40, "ok"), [&](int pid) {
    const unsigned now_mw = limit_mw();
    if (!killed && now_mw != kCapturedLimitMw && now_mw != 450000) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
  });
  ASSERT_TRUE(killed) << "the limit never changed: " << r.err;
  EXPECT_EQ(r.signal, SIGKILL);
  // The watchdog notices at once and restores through its own NVML; give a loaded machine its time.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  // It restores the limit first and removes its journal after: wait for both.
  while ((limit_mw() != kCapturedLimitMw || journal_left()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(limit_mw(), kCapturedLimitMw);
  EXPECT_FALSE(journal_left());
}

TEST_F(TuneTest, ASigtermToWattwiseStopsTheJobAndRestoresTheLimit) {
  bool sent = false;
  const auto r = tune({"--range", "250:450"}, job(30, 40, "ok"), [&](int pid) {
    if (!sent && limit_mw() != kCapturedLimitMw) {
      ::kill(pid, SIGTERM);
      sent = true;
    }
  });
  ASSERT_TRUE(sent) << "the limit never changed: " << r.err;
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  EXPECT_LT(r.wall_s, 25) << "the job was not stopped";
  EXPECT_EQ(limit_mw(), kCapturedLimitMw);
  EXPECT_FALSE(journal_left());
}

TEST_F(TuneTest, AJobWithoutIterationMarkersGetsOneLineAndKeepsItsSetting) {
  const auto r = tune({"--marker-grace", "1", "--json", path("tune.json").string()}, job(3, 40, "nomarkers"));
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("wattwise.iteration()"), std::string::npos) << r.err;
  EXPECT_EQ(limits_seen_, std::set<unsigned>{kCapturedLimitMw});
  const auto j = read_json("tune.json");
  EXPECT_TRUE(j.at("tuning").at("no_markers").get<bool>());
  EXPECT_TRUE(j.at("decisions").empty());
  EXPECT_TRUE(j.at("settled").is_null());
}

TEST_F(TuneTest, DryRunMeasuresAndDecidesButChangesNothing) {
  const auto r =
      tune({"--dry-run", "--json", path("tune.json").string(), "--stationary-window", "1"}, job(8, 40, "ok"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(limits_seen_, std::set<unsigned>{kCapturedLimitMw});
  EXPECT_FALSE(std::filesystem::exists(path("fake_state.json")));  // no control call ever reached the fake
  EXPECT_FALSE(std::filesystem::exists(path("state")));            // no journal, no lock
  const auto j = read_json("tune.json");
  EXPECT_TRUE(j.at("dry_run").get<bool>());
  ASSERT_FALSE(j.at("decisions").empty());
  EXPECT_NE(r.err.find("would set power limit"), std::string::npos) << r.err;
  // Every iteration ran at the captured limit, and its spread is reported.
  const auto& settings = j.at("tuning").at("settings");
  ASSERT_EQ(settings.size(), 1u);
  EXPECT_EQ(settings[0].at("value").get<double>(), 650);
  // A 40 ms sleep never ends early; on a loaded machine it may end tens of ms late.
  EXPECT_GE(settings[0].at("time_s_mean").get<double>(), 0.038);
  EXPECT_LE(settings[0].at("time_s_mean").get<double>(), 0.090);
  // The fake draws 400 W flat: an iteration's energy is 400 W times its time, up to the 20 ms samples'
  // edges, which average out over the iterations.
  EXPECT_NEAR(settings[0].at("energy_j_mean").get<double>(),
              400 * settings[0].at("time_s_mean").get<double>(),
              0.03 * 400 * settings[0].at("time_s_mean").get<double>());
}

TEST_F(TuneTest, TheFootprintFlagsPutTheJobsCo2eAndCostInTheJson) {
  const auto r = tune(
      {"--dry-run", "--carbon-intensity", "350", "--price", "0.25EUR", "--json", path("tune.json").string()},
      job(2, 40, "ok"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = read_json("tune.json");
  const double kwh = j.at("energy_j").get<double>() / 3.6e6;
  ASSERT_GT(kwh, 0);
  EXPECT_NEAR(j.at("co2e_g").get<double>(), 350 * kwh, 1e-9 * 350 * kwh);
  EXPECT_NEAR(j.at("cost").at("amount").get<double>(), 0.25 * kwh, 1e-9);
  // The summary is for people: on stderr, as measure's, never in the job's stdout.
  EXPECT_NE(r.err.find("CO2e"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("CO2e"), std::string::npos) << r.out;
}

TEST_F(TuneTest, BadFlagsAreUsageErrorsBeforeAnyChange) {
  std::ofstream(path("exists.db")) << "x";
  const std::vector<std::vector<std::string>> bad = {{"--knob", "fan-speed"},
                                                     {"--range", "100:300"},
                                                     {"--range", "400:300"},
                                                     {"--metric", "time"},
                                                     {"--marker-grace", "0"},
                                                     {"--max-slowdown", "lots"},
                                                     {"--db", path("exists.db").string()}};
  for (const auto& flags : bad) {
    const auto r = tune(flags, job(1, 40, "ok"));
    EXPECT_EQ(r.exit_code, 2) << flags[0] << " " << flags[1] << ": " << r.err;
    single_error_line(r);
  }
  EXPECT_FALSE(std::filesystem::exists(path("fake_state.json")));
  EXPECT_FALSE(std::filesystem::exists(path("tuning_state.json")));  // the job never ran
}

// A range of one value is a setting to hold (the tuner and `tune --simulate` take it so): it is applied
// before the first iteration, held, and the captured limit restored at the end. It was refused as "outside
// what the job's GPUs accept or empty" although it was neither.
TEST_F(TuneTest, ARangeOfOneValueHoldsThatValueAndRestoresTheCapturedOne) {
  const auto r = tune({"--json", path("tune.json").string(), "--range", "300:300", "--stationary-window", "1"},
                      job(6, 25, "ok"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = read_json("tune.json");
  EXPECT_EQ(j.at("tuning").at("start_value").get<double>(), 300);
  const auto& changes = j.at("tuning").at("changes");
  ASSERT_EQ(changes.size(), 1u) << changes.dump();
  EXPECT_EQ(changes[0].at("value").get<double>(), 300);
  for (const auto& d : j.at("decisions")) EXPECT_EQ(d.at("power_limit_w").get<double>(), 300) << d.dump();
  for (unsigned mw : limits_seen_) EXPECT_TRUE(mw == 300000 || mw == kCapturedLimitMw) << mw;
  EXPECT_EQ(limit_mw(), kCapturedLimitMw);
}

// The SM clock's candidates are at least the GPU's own clock spacing apart (the fake's 7 clocks, 345 to
// 1980 MHz): 15 MHz apart, as before, candidates such as 600 and 720 MHz locked the same 600 MHz clock under
// two names, and the search spent the job on them without settling.
TEST_F(TuneTest, SmClockCandidatesLockDistinctSupportedClocks) {
  const std::vector<double> supported = {345, 600, 900, 1200, 1500, 1755, 1980};
  const auto r = tune({"--knob", "sm-clock", "--json", path("tune.json").string(), "--stationary-window", "1"},
                      job(8, 25, "ok"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<double> locked;
  const auto j = read_json("tune.json");
  const auto& settings = j.at("tuning").at("settings");
  ASSERT_GT(settings.size(), 2u) << r.err;
  for (const auto& s : settings) {
    const double value = s.at("value").get<double>();
    locked.insert(*std::min_element(supported.begin(), supported.end(), [&](double a, double b) {
      return std::fabs(a - value) < std::fabs(b - value);
    }));
  }
  EXPECT_EQ(locked.size(), settings.size()) << settings.dump();
}

// The simulated tuning writes the same tuning fields as a live one: the budget's tolerance and the probe
// caps are the tuner's (they were 0 there, and the summary said "kept to within 0% of its time").
TEST_F(TuneTest, ASimulatedTuningReportsTheBudgetsToleranceAndTheProbeCapsAsALiveOne) {
  const auto r = wattwise({"tune", "--simulate", "v100:resnet50", "--iterations", "400", "--max-slowdown", "10%",
                           "--json", path("sim.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto tuning = read_json("sim.json")["tuning"];
  EXPECT_DOUBLE_EQ(tuning["budget_tolerance"].get<double>(), 0.0015);
  EXPECT_EQ(tuning["max_probe_iterations"], 15);
  EXPECT_EQ(tuning["search_probe_iterations"], 11);
  EXPECT_NE(r.err.find("max slowdown 10.0% (kept to within 0.15% of its time)"), std::string::npos) << r.err;
}

// "none" is the default the help and the error name, so it is a value the flag takes (no budget).
TEST_F(TuneTest, MaxSlowdownNoneMeansNoBudget) {
  const auto r = wattwise({"tune", "--simulate", "v100:resnet50", "--iterations", "400", "--max-slowdown", "none",
                           "--json", path("none.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_json("none.json")["tuning"]["max_slowdown"].is_null());
}

// A negative or absurd simulated job length is one line and exit 2; "-5" was read as 2^64 - 5 iterations and
// ran for ever.
TEST_F(TuneTest, ASimulatedJobsIterationsOutOfRangeAreAUsageError) {
  for (const std::string iterations : {"-5", "0", "1e3", "100000000000"}) {
    SpawnOptions options;
    options.guard = std::chrono::seconds(20);
    const auto r = wattwise({"tune", "--simulate", "v100:resnet50", "--iterations", iterations}, options);
    EXPECT_EQ(r.exit_code, 2) << iterations << ": " << r.err;
    EXPECT_NE(single_error_line(r).find("--iterations"), std::string::npos) << r.err;
  }
}

TEST_F(TuneTest, TheJobsTuningStateIsNoneWithoutWattwise) {
  const auto r = run(job(0.2, 40, "ok"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_json("tuning_state.json").is_null());
}

}  // namespace
}  // namespace wattwise::e2e
