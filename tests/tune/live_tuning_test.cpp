#include "tune/live_tuning.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../support/temp_dir.hpp"
#include "sim/noise.hpp"
#include "tune/live_report.hpp"
#include "tune/live_session.hpp"

namespace wattwise::tune {
namespace {

using workload::Marker;
using workload::MarkerKind;

TunerConfig power_config() {
  TunerConfig c;
  c.min_value = 200;
  c.max_value = 700;
  c.step = 25;
  c.start_value = 700;
  return c;
}

// A job of 100 ms iterations on a virtual clock: each step is one iteration's begin and end, and the energy
// of a window depends on the power limit in force when it began (energy falls with the limit down to 300 W,
// time does not move): what the fake GPU of the e2e tests does under a cap.
class LiveJobDouble {
 public:
  explicit LiveJobDouble(LiveTuningOptions options) : options_(std::move(options)) {
    if (!options_.dry_run) {
      options_.apply = [this](double value) {
        applied_.push_back(value);
        limit_w_ = value;
        changed_at_ = clock_.now();
      };
    }
    options_.say = [this](const std::string& line) { said_.push_back(line); };
    tuning_.emplace(options_);
  }

  // Runs `iterations` iterations (or, without markers, the same time with none).
  void run(int iterations, bool with_markers = true) {
    for (int i = 0; i < iterations; ++i) {
      const Nanos begin = clock_.now();
      clock_.advance(std::chrono::milliseconds(100));
      std::vector<Marker> markers;
      if (with_markers) {
        markers.push_back(Marker{begin, MarkerKind::kBegin, "iteration", {}, 42, std::nullopt, std::nullopt});
        markers.push_back(
            Marker{clock_.now(), MarkerKind::kEnd, "iteration", {}, 42, std::nullopt, std::nullopt});
        begin_limit_[begin.count()] = limit_w_;
      }
      tuning_->step(clock_, Nanos{0}, markers, [this](const std::vector<sampling::EnergyWindow>& windows) {
        std::vector<sampling::ResolvedEnergy> out;
        for (const auto& w : windows) {
          // Never asked for an iteration that began before the last change took effect.
          EXPECT_GE(w.begin, changed_at_);
          const double power_w = std::max(300.0, std::min(limit_w_, 500.0)) * (1 + 0.01 * noise_.normal());
          out.push_back({power_w * to_seconds(w.end - w.begin), sampling::EnergyMethod::kSamplesReconciled});
        }
        return out;
      });
    }
  }

  LiveTuningOptions options_;
  VirtualClock clock_{Nanos{0}};
  sim::Noise noise_{3};
  double limit_w_ = 700;
  Nanos changed_at_{0};
  std::vector<double> applied_;
  std::vector<std::string> said_;
  std::map<std::int64_t, double> begin_limit_;
  std::optional<LiveTuning> tuning_;
};

TEST(LiveTuning, AppliesEveryChangeTheTunerDecidesAndSettles) {
  LiveTuningOptions options;
  options.tuner = power_config();
  LiveJobDouble job(options);
  job.run(1500);
  const LiveTuningResult r = job.tuning_->result();
  ASSERT_FALSE(r.decisions.empty());
  ASSERT_TRUE(r.settled);
  // Energy falls down to 300 W and time never moves: the settled limit is at most 300 W + one step.
  EXPECT_LE(*r.settled, 325);
  // Every decision that changed the value was applied, in order, and recorded as a change.
  std::vector<double> changed;
  double held = 700;
  for (const auto& d : r.decisions) {
    if (d.value != held) changed.push_back(d.value);
    held = d.value;
  }
  EXPECT_EQ(job.applied_, changed);
  ASSERT_EQ(r.changes.size(), changed.size());
  for (std::size_t i = 0; i < changed.size(); ++i) EXPECT_EQ(r.changes[i].value, changed[i]);
  EXPECT_EQ(r.iterations_seen, 1500u);
  EXPECT_LE(r.iterations_fed + r.iterations_discarded, r.iterations_seen);
  EXPECT_FALSE(r.dry_run);
  EXPECT_FALSE(r.no_markers);
}

TEST(LiveTuning, DryRunAppliesNothingAndSummarisesTheCapturedSettingOnly) {
  LiveTuningOptions options;
  options.tuner = power_config();
  options.dry_run = true;  // no apply given: calling it would throw
  LiveJobDouble job(options);
  job.run(600);
  const LiveTuningResult r = job.tuning_->result();
  EXPECT_TRUE(job.applied_.empty());
  EXPECT_TRUE(r.dry_run);
  EXPECT_FALSE(r.decisions.empty());  // it says what it would do
  ASSERT_EQ(r.settings.size(), 1u);   // but every iteration ran at the captured limit
  EXPECT_EQ(r.settings[0].value, 700);
  EXPECT_EQ(r.settings[0].iterations, r.iterations_fed);
  EXPECT_NEAR(r.settings[0].energy_j_mean, 50, 1.5);  // 500 W x 0.1 s
  // A dry run never says it sets anything: a probe either would set a value or holds the one in force.
  for (const auto& line : job.said_)
    if (line.find("tune: probe") != std::string::npos) {
      EXPECT_TRUE(line.find("would set") != std::string::npos || line.find("probe: holds") != std::string::npos)
          << line;
      EXPECT_EQ(line.find("probe: sets"), std::string::npos) << line;
    }
}

TEST(LiveTuning, NoIterationMarkersWithinTheGraceGivesOneLineAndChangesNothing) {
  LiveTuningOptions options;
  options.tuner = power_config();
  options.marker_grace = std::chrono::seconds(2);
  LiveJobDouble job(options);
  job.run(19, false);  // 1.9 s: not yet
  EXPECT_TRUE(job.said_.empty());
  job.run(5, false);
  ASSERT_EQ(job.said_.size(), 1u);
  EXPECT_NE(job.said_[0].find("wattwise.iteration()"), std::string::npos) << job.said_[0];
  // Markers that come later do not start a tuning: the setting stays as captured.
  job.run(300);
  const LiveTuningResult r = job.tuning_->result();
  EXPECT_TRUE(r.no_markers);
  EXPECT_TRUE(job.applied_.empty());
  EXPECT_TRUE(r.decisions.empty());
  EXPECT_EQ(job.said_.size(), 1u);
}

TEST(LiveTuning, PublishesItsStateForTheJob) {
  const wattwise::testing::TempDir dir("ww-live-state");
  LiveTuningOptions options;
  options.tuner = power_config();
  options.state_file = dir / "tuning.json";
  LiveJobDouble job(options);
  job.run(1500);
  std::ifstream in(options.state_file);
  const auto state = nlohmann::json::parse(in);
  const LiveTuningResult r = job.tuning_->result();
  EXPECT_EQ(state.at("phase"), "settled");
  EXPECT_EQ(state.at("knob"), "power-limit");
  EXPECT_EQ(state.at("value").get<double>(), job.limit_w_);
  EXPECT_EQ(state.at("settled").get<double>(), *r.settled);
  EXPECT_EQ(state.at("captured_value").get<double>(), 700);
}

TEST(LiveTuning, IterationsForPrecisionFollowFromTheSpread) {
  EXPECT_EQ(iterations_for_precision(100, 2, 0.01), 16u);  // (1.96 * 2 / 1)^2 = 15.4
  EXPECT_FALSE(iterations_for_precision(100, 0, 0.01));
}

TEST(LiveSession, AnSmClockCandidateIsLockedAtTheNearestSupportedClock) {
  const std::vector<unsigned> supported = {345, 360, 1200, 1215, 1980};
  EXPECT_EQ(applicable_value(TuneKnob::kSmClock, 1207, supported), 1200);
  EXPECT_EQ(applicable_value(TuneKnob::kSmClock, 1209, supported), 1215);
  EXPECT_EQ(applicable_value(TuneKnob::kSmClock, 3000, supported), 1980);
  EXPECT_EQ(applicable_value(TuneKnob::kPowerLimit, 237.5, supported), 237.5);  // limits as they are
}

}  // namespace
}  // namespace wattwise::tune
