#pragma once

// The live side of `wattwise tune`: watches a running job (measure::JobWatcher), turns its iteration
// markers and the sampler's readings into measured iterations, feeds them to the Tuner and applies its
// decisions. It decides nothing itself and never touches a GPU: `apply` (the settings guard, wired by the
// CLI) does, and in a dry run nothing is applied at all.
//
// The order of one step (every kPollPeriod while the job runs):
//   new markers -> iterations complete on every rank (IterationAssembler)
//   -> drop those that began before the setting in force took effect (they ran, at least partly, at the
//      previous one; counted as `iterations_discarded`)
//   -> the leading ones whose energy the readings cover (sampling::LiveEnergy, up to ~0.5 s after their end)
//   -> Tuner::observe, one by one; on a decision that changes the value: apply, note when it took effect,
//      and stop feeding (what is still pending began before it).
// A job that sends no iteration marker within `marker_grace` gets one line saying how to mark them; the
// setting then stays as captured for the rest of the job.

#include <atomic>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "measure/session.hpp"
#include "sampling/live_energy.hpp"
#include "tune/live_iterations.hpp"
#include "tune/tuner.hpp"

namespace wattwise::tune {

inline constexpr Nanos kPollPeriod = std::chrono::milliseconds(50);
inline constexpr Nanos kDefaultMarkerGrace = std::chrono::seconds(60);

// The one line for a job without iteration markers (docs/tune.md).
std::string no_markers_line(Nanos grace);

struct LiveTuningOptions {
  TunerConfig tuner;
  // The GPUs' value when the job starts (restored at its end); absent: tuner.start_value. When the two
  // differ (the captured value lies outside --range) the start value is applied before the first iteration.
  std::optional<double> captured_value;
  Nanos marker_grace = kDefaultMarkerGrace;
  bool dry_run = false;
  // Sets the knob to `value` on every job GPU; throws when it cannot (the tuning then stops and the
  // setting is restored by the caller's guard). Never called in a dry run.
  std::function<void(double value)> apply;
  std::function<void(const std::string& line)> say;  // one line for people (stderr); may be empty
  // Where the tuning state is published for the job (Python's wattwise.tuning_state()); empty: nowhere.
  std::filesystem::path state_file;
};

// When the setting changed (or, in a dry run, would have).
struct SettingChange {
  double value = 0;
  double at_s = 0;                 // since the job's start, when it took effect
  std::uint64_t at_iteration = 0;  // the job's completed iterations then
};

// The iterations fed at one setting actually in force (in a dry run, always the captured one).
struct SettingSummary {
  double value = 0;
  std::uint64_t iterations = 0;
  std::uint64_t with_energy = 0;
  double time_s_mean = 0;
  double time_s_std = 0;
  double energy_j_mean = 0;
  double energy_j_std = 0;
};

struct LiveTuningResult {
  TuneKnob knob = TuneKnob::kPowerLimit;
  std::string metric;  // its JSON name (analysis::MetricSpec::name)
  std::optional<double> max_slowdown;
  double budget_tolerance = 0;  // how closely max_slowdown is kept (TunerConfig::budget_tolerance)
  std::uint64_t max_probe_iterations = 0;     // TunerConfig's probe caps, so that a trace's probe lengths
  std::uint64_t search_probe_iterations = 0;  // can be read from the result alone
  double captured_value = 0;  // the GPUs' value before the job, restored after it
  double start_value = 0;     // the tuner's reference point (the captured value unless outside --range)
  bool dry_run = false;
  std::vector<Decision> decisions;
  std::optional<double> settled;
  bool held_start = false;  // settled on the start value: no setting beat it within the noise
  std::uint64_t profiling_iterations = 0;
  std::uint64_t stationary_wait_iterations = 0;  // at the start value before the baseline (not profiling)
  std::uint64_t iterations_seen = 0;             // completed on every rank
  std::uint64_t iterations_fed = 0;              // given to the tuner
  std::uint64_t iterations_discarded = 0;        // began before the setting in force took effect
  // The job's iterations when the first settle was decided, discarded ones included: what the search cost
  // the job (profiling_iterations counts only those fed to the tuner).
  std::optional<std::uint64_t> iterations_until_settled;
  std::vector<SettingChange> changes;
  std::vector<SettingSummary> settings;  // by value, ascending
  bool no_markers = false;               // none within the grace period: nothing was tuned
  std::string error;                     // applying a setting failed: the tuning stopped there
};

class LiveTuning {
 public:
  explicit LiveTuning(LiveTuningOptions options);

  // The measure::JobWatcher: steps every kPollPeriod until the job ends.
  void watch(const measure::LiveJob& job, const std::atomic<bool>& job_ended);

  // One step at `now` with the markers heard since the last one; `resolve` gives the energy of the
  // leading windows it can (sampling::LiveEnergy::resolve in a live run, a test's own in tests).
  using Resolver =
      std::function<std::vector<sampling::ResolvedEnergy>(const std::vector<sampling::EnergyWindow>&)>;
  void step(Clock& clock, Nanos job_start, const std::vector<workload::Marker>& markers,
            const Resolver& resolve);

  LiveTuningResult result() const;

 private:
  struct Accumulator {
    std::uint64_t n = 0, n_energy = 0;
    double time_sum = 0, time_sq = 0, energy_sum = 0, energy_sq = 0;
  };
  void feed(Clock& clock, Nanos job_start, const LiveIteration& iteration,
            const sampling::ResolvedEnergy& energy);
  void act_on(Clock& clock, Nanos job_start, const Decision& decision);
  void change_to(Clock& clock, Nanos job_start, double value);  // applies (unless dry run) and records
  void publish(const std::string& phase) const;
  void say(const std::string& line) const;

  LiveTuningOptions options_;
  Tuner tuner_;
  IterationAssembler assembler_;
  std::deque<LiveIteration> pending_;
  Nanos in_force_since_{0};  // when the setting in force took effect (the job's start at first)
  double in_force_ = 0;      // the value actually in force (the captured one throughout a dry run)
  bool started_ = false;
  bool stopped_ = false;  // no markers, or a failed change: nothing more is fed
  std::map<double, Accumulator> by_setting_;
  LiveTuningResult result_;
};

}  // namespace wattwise::tune
