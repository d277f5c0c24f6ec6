// The regret of recommendations: the exhaustive 31 x 5 power-limit sweep against `sweep --adaptive` with
// its default flags (steered by four metrics at once) and against `sweep --adaptive --metric M` (steered by
// the one metric each case is judged on: four sweeps per seed, each within its own budget), on the six simulated V100 models and on the same models replayed from the published
// table (shared/reference/v100_cnn_power_caps.csv), for seeds A..B. In process, on the simulator's model
// (sim::run_unsampled: the job's time and exact energy, no sampler and no store), so 20 seeds x 12
// profiles x ~200 runs take seconds. Regret = metric of the recommended limit on the noise-free curve
// against the noise-free curve's best, in %. Usage: bench_adaptive_regret [FIRST_SEED LAST_SEED]
// (DEBUG_CASES=1 lists the adaptive cases over the goal on stderr, DEBUG_ALL=1 with it every case;
// DEBUG_CURVE=v100:MODEL its regret curve; DEBUG_INTERVAL=1 the cases whose interval misses the true optimum;
// DEBUG_RUNS=replay:vgg19:101 the runs of that adaptive sweep per value, with each run's EDP against its
// reference; DEBUG_NOISEFREE=1 analyze's recommendation over the noise-free curve, every 5 W measured twice:
// the decision model's own bias, before any noise; DEBUG_DUMP=FILE appends each profile's noise-free curve
// and each adaptive sweep's runs to FILE, for bench/adaptive_picks.py; SKIP_AA=1 leaves the A/A sweeps out,
// for quicker design runs. Design knobs, to measure a sweep other than the default one: BUDGET_RUNS=N,
// PRECISION_STEPS=K (grid steps), MAX_REPEATS=N. REDRAW=N: every adaptive sweep's order seed moved by N, a
// change that cannot matter, so that each later run draws its noise anew: a design is told from such a
// redraw only by a gain larger than the spread over a few N, 1-2 points of 480 replayed cases.)
// Last, the headline (the lowest energy at most 10% slower than 300 W, analyze's default) over the
// exhaustive, the default adaptive and the E-steered sweeps' runs, judged by headline_tally.hpp
// (DEBUG_HEADLINE=1 lists its cases over 0.5% or over the limit on stderr; NO_HEADLINE_STEER=1: every
// adaptive sweep without the refinement of the headline's limit, as before it).
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "experiment/adaptive_sweep.hpp"
#include "experiment/replay_table.hpp"
#include "headline_tally.hpp"
#include "sim/simulation.hpp"
#include "sim/unsampled_run.hpp"
#include "v100_bench_profiles.hpp"

namespace ww = wattwise;
using ww::analysis::MetricSpec;

namespace {

using ww::bench::Profile;

constexpr double kRegretGoalPct = 0.5;
constexpr unsigned kExhaustiveRepeats = 5;
constexpr double kDefaultLimitW = 300;
constexpr std::int64_t kMarkedIterations = 8;  // as `sweep --simulate` marks them

struct Curve {
  std::vector<double> limits;
  std::map<double, ww::sim::UnsampledRun> at;
};

std::vector<MetricSpec> bench_metrics() {
  return {ww::analysis::parse_metric("E"), ww::analysis::parse_metric("EDP"),
          ww::analysis::parse_metric("eds:2.0"), ww::analysis::parse_metric("eds:1.5")};
}

ww::sim::Simulation simulation(const Profile& p, bool noisy) {
  ww::sim::SimulationOptions options;
  options.iteration_markers_per_epoch = kMarkedIterations;
  // Drift on (warm-up, slow wander: sim/drift.hpp) for the noisy sweeps; the noise-free curve has none.
  if (noisy && !std::getenv("NO_DRIFT")) options.drift = ww::sim::DriftSpec::typical();
  ww::sim::Simulation sim = ww::sim::make_simulation(p.simulate, options, ww::experiment::read_replay_table);
  if (!noisy) sim.options.noise_fraction = 0, sim.options.power_noise_fraction = 0;
  return sim;
}

ww::sim::UnsampledRun run_at(ww::sim::Simulation& sim, double limit_w, std::uint64_t seed) {
  sim.system->gpu(0).set_power_limit_w(limit_w);
  return ww::sim::run_unsampled(sim, seed);
}

Curve noise_free_curve(const Profile& p) {
  ww::sim::Simulation sim = simulation(p, false);
  const auto limits = sim.system->gpu(0).power_limits();
  Curve c;
  for (double w = std::ceil(limits->min_w / 5) * 5; w <= limits->max_w + 1e-9; w += 5) {
    c.limits.push_back(w);
    c.at[w] = run_at(sim, w, 1);
  }
  return c;
}

// The noise-free curve's best limit for `m`.
double true_optimum_w(const Curve& c, const MetricSpec& m) {
  const auto& ref = c.at.at(kDefaultLimitW);
  const ww::analysis::ReferencePoint reference{ref.energy_j, ref.time_s};
  double best_w = c.limits.front(), best = 1e300;
  for (const auto& [w, r] : c.at)
    if (const double v = ww::analysis::metric_value(m, r.energy_j, r.time_s, reference); v < best)
      best = v, best_w = w;
  return best_w;
}

double regret_pct(const Curve& c, const MetricSpec& m, double limit_w) {
  const auto& ref = c.at.at(kDefaultLimitW);
  const ww::analysis::ReferencePoint reference{ref.energy_j, ref.time_s};
  double best = 1e300;
  for (const auto& [w, r] : c.at)
    best = std::min(best, ww::analysis::metric_value(m, r.energy_j, r.time_s, reference));
  const auto& r = c.at.at(limit_w);
  return 100 * (ww::analysis::metric_value(m, r.energy_j, r.time_s, reference) / best - 1);
}

// What `analyze` makes of the runs, per metric: its recommendation (the fastest setting of the band not
// distinguishable from the best, what users act on) and the band's best (the lowest mean).
struct AnalysisPicks {
  std::vector<double> recommended;
  std::vector<double> lowest_mean;
  std::vector<std::pair<double, double>> interval;  // the fitted optimum's 90% interval (no fit: the pick)
  std::vector<bool> beyond_noise;                   // "beyond noise" claimed against the reference
  std::vector<bool> lack_of_fit;                    // the fit's lack-of-fit test rejected the quadratic
  std::vector<bool> median_of_cubics;               // ... and the pick's median is the resampled cubics'
  double headline_w = 0;  // the headline's pick (E within 10% of the reference's time: headline_tally.hpp)
  bool headline_flagged = false;  // its time may be over the limit within the noise (may_exceed_limit)
  std::optional<std::pair<double, double>> headline_interval;  // its slowdown's 95% interval
  std::optional<ww::analysis::SlowdownIntervalFrom> headline_interval_from;  // how (time_vs_ref_ci95_from)
  std::vector<double> measured_w;  // the limits the sweep ran
};

// Over every fitted recommendation analysis_picks makes (A/A included): how many print a median outside
// their own 90% interval (none since 1e0f4d1; 7 on ed9ea1f, seeds 1..20), and which fits the median is of.
struct DecisionCounts {
  std::size_t fitted = 0, median_outside = 0, cubics = 0, misfit_too_few_for_cubic = 0;
};
DecisionCounts decision_counts;

AnalysisPicks analysis_picks(const std::vector<ww::analysis::RunRecord>& runs) {
  ww::analysis::AnalysisOptions options;
  options.default_setting = ww::analysis::Setting{{"power_limit_w", kDefaultLimitW}};
  options.metrics = bench_metrics();
  const auto analysis = ww::analysis::analyze(runs, options);
  AnalysisPicks picks;
  picks.headline_w = analysis.headline.pick.setting.at("power_limit_w");
  picks.headline_flagged = ww::analysis::may_exceed_limit(analysis.headline);
  picks.headline_interval = analysis.headline.pick.time_vs_ref_ci95_pct;
  picks.headline_interval_from = analysis.headline.pick.time_vs_ref_ci95_from;
  for (const auto& s : analysis.settings) picks.measured_w.push_back(s.setting.at("power_limit_w"));
  for (const auto& rec : analysis.recommendations) {
    picks.recommended.push_back(rec.setting.at("power_limit_w"));
    picks.lowest_mean.push_back(analysis.settings.at(rec.best_index).setting.at("power_limit_w"));
    picks.interval.push_back(rec.decision.method == "fit"
                                 ? std::pair{rec.decision.optimum_low, rec.decision.optimum_high}
                                 : std::pair{picks.recommended.back(), picks.recommended.back()});
    picks.beyond_noise.push_back(rec.significant.value_or(false));
    picks.lack_of_fit.push_back(rec.decision.lack_of_fit);
    picks.median_of_cubics.push_back(rec.decision.median_of_cubics);
    if (rec.decision.method == "fit") {
      const auto& d = rec.decision;
      ++decision_counts.fitted;
      decision_counts.median_outside += d.optimum_median < d.optimum_low || d.optimum_median > d.optimum_high;
      decision_counts.cubics += d.median_of_cubics;
      decision_counts.misfit_too_few_for_cubic += d.lack_of_fit && !d.median_of_cubics;
    }
  }
  return picks;
}

ww::analysis::RunRecord record(double limit_w, const ww::sim::UnsampledRun& r) {
  ww::analysis::RunRecord rec;
  rec.setting = {{"power_limit_w", limit_w}};
  rec.time_s = r.time_s;
  rec.energy_j = r.energy_j;
  return rec;
}

struct Outcome {
  std::vector<double> picks;        // per metric: the sweep's own (adaptive: its model's; exhaustive: lowest mean)
  std::vector<double> recommended;  // per metric: analyze's recommendation over the same runs
  AnalysisPicks analysed;           // analyze's over the same runs, all of it
  std::size_t runs = 0;
  std::size_t disagreements = 0;  // adaptive: metrics where its own pick is not analyze's (one answer: 0)
};

// The four metrics' cases from `sweep --adaptive --metric M`, one sweep per metric: steered[i] is the sweep
// steered by metric i alone.
struct SteeredOutcomes {
  std::vector<Outcome> steered;
  std::size_t runs() const {
    std::size_t n = 0;
    for (const auto& o : steered) n += o.runs;
    return n;
  }
};

// A/A (`aa`): every limit is run as the reference, so no setting differs from any other.
Outcome exhaustive(const Profile& p, const Curve& c, std::uint64_t seed, bool aa = false) {
  ww::sim::Simulation sim = simulation(p, true);
  std::vector<ww::analysis::RunRecord> runs;
  std::uint64_t index = 0;
  for (unsigned k = 0; k < kExhaustiveRepeats; ++k)
    for (double w : c.limits) runs.push_back(record(w, run_at(sim, aa ? kDefaultLimitW : w, seed * 1000003 + index++)));
  const AnalysisPicks analysed = analysis_picks(runs);
  Outcome o{analysed.lowest_mean, analysed.recommended, analysed, runs.size()};
  return o;
}

// `steered_by`: the index of the one metric the sweep refines (`--metric M`); none: all four (the default).
// `max_slowdown`: its optimum among the values at most that much slower (`--max-slowdown`).
Outcome adaptive(const Profile& p, const Curve& c, std::uint64_t seed, bool aa = false,
                 std::optional<std::size_t> steered_by = std::nullopt,
                 std::optional<double> max_slowdown = std::nullopt) {
  std::vector<MetricSpec> steering = bench_metrics();
  if (steered_by) steering = {steering[*steered_by]};
  ww::experiment::AdaptiveConfig config = ww::experiment::default_adaptive_config(
      "power_limit_w", c.limits, kDefaultLimitW, steering, seed);
  if (const char* v = std::getenv("BUDGET_RUNS")) config.budget_runs = std::strtoul(v, nullptr, 10);
  if (const char* v = std::getenv("PRECISION_STEPS"))
    config.precision = std::strtod(v, nullptr) * (c.limits.back() - c.limits.front()) / double(c.limits.size() - 1);
  if (const char* v = std::getenv("MAX_REPEATS")) config.max_repeats = std::strtoul(v, nullptr, 10);
  if (const char* v = std::getenv("REDRAW")) config.seed += 7919 * std::strtoull(v, nullptr, 10);
  if (std::getenv("NO_HEADLINE_STEER")) config.headline.reset();
  config.max_slowdown = max_slowdown;  // the sweep before it located the limit
  ww::sim::Simulation sim = simulation(p, true);
  std::vector<ww::experiment::AdaptiveObservation> obs;
  std::vector<ww::analysis::RunRecord> runs;
  for (;;) {
    const auto d = ww::experiment::decide_next(config, obs);
    if (!d.next) {
      if (const char* dump = std::getenv("DEBUG_DUMP"); dump && !aa && !steered_by) {
        std::ofstream f(dump, std::ios::app);
        for (const auto& r : obs)
          f << fmt::format("run {} {} {} {:.17g} {:.17g}\n", p.name, seed, r.value, r.time_s, r.energy_j);
      }
      Outcome o;
      o.analysed = analysis_picks(runs);
      o.recommended = o.analysed.recommended;
      o.runs = obs.size();
      // The sweep's own picks, per bench metric; a steered sweep has one, its metric's.
      o.picks = o.recommended;
      for (std::size_t b = 0; b < d.best.size(); ++b) {
        const std::size_t i = steered_by ? *steered_by : b;
        o.picks[i] = d.best[b].pick_value;
        o.disagreements += o.picks[i] != o.recommended[i];
      }
      if (const char* want = std::getenv("DEBUG_RUNS"); want && !steered_by && p.name + ":" + std::to_string(seed) == want) {
        std::map<double, int> counts;
        for (const auto& r : obs) counts[r.value]++;
        // Each run's EDP against the mean of this sweep's reference runs (what its fit sees), and the
        // value's regret on the noise-free curve.
        const MetricSpec edp = ww::analysis::parse_metric("EDP");
        double ref_e = 0, ref_t = 0, ref_n = 0;
        for (const auto& r : obs)
          if (r.value == kDefaultLimitW) ref_e += r.energy_j, ref_t += r.time_s, ++ref_n;
        if (ref_n == 0) {  // the sweep always runs the reference first; a design knob might change that
          fmt::print(stderr, "  no run at the reference {} W: no EDP to print\n", kDefaultLimitW);
          return o;
        }
        const ww::analysis::ReferencePoint ref{ref_e / ref_n, ref_t / ref_n};
        for (const auto& [v, n] : counts) {
          std::string values;
          for (const auto& r : obs)
            if (r.value == v) values += fmt::format(" {:.4f}", ww::analysis::metric_value(edp, r.energy_j, r.time_s, ref));
          fmt::print(stderr, "  {} W x{} EDP{} (noise-free regret {:.2f}%)\n", v, n, values, regret_pct(c, edp, v));
        }
        for (const auto& b : d.best) fmt::print(stderr, "  pick {} fitted {}\n", b.pick_value, b.fitted_value);
      }
      return o;
    }
    const auto r = run_at(sim, aa ? kDefaultLimitW : *d.next, seed * 1000003 + obs.size());
    obs.push_back({*d.next, r.time_s, r.energy_j});
    runs.push_back(record(*d.next, r));
  }
}

SteeredOutcomes steered(const Profile& p, const Curve& c, std::uint64_t seed, bool aa = false) {
  SteeredOutcomes s;
  for (std::size_t i = 0; i < bench_metrics().size(); ++i) s.steered.push_back(adaptive(p, c, seed, aa, i));
  return s;
}

// The headline's row of the sweep steered by it (--metric E --max-slowdown 10%).
constexpr const char* kLimitedSweep = "ada-1 (E<=10%)";

// The recommendations compared, in column order.
enum Column { kExhaustivePick, kExhaustiveAnalyze, kAdaptiveAnalyze, kSteeredAnalyze, kColumns };

struct Tally {
  std::size_t cases = 0;
  std::array<std::size_t, kColumns> ok{};
  std::array<double, kColumns> max_pct{};
  std::size_t exhaustive_runs = 0, adaptive_runs = 0, steered_runs = 0;  // steered: its four sweeps' runs
  // The fit's 90% interval holds the true optimum; the summed widths of those intervals (+-2.5 W included).
  std::array<std::size_t, kColumns> covered{};
  std::array<double, kColumns> width_w{};
  void add(const std::array<double, kColumns>& regret_pct) {
    ++cases;
    for (std::size_t c = 0; c < kColumns; ++c) {
      ok[c] += regret_pct[c] <= kRegretGoalPct;
      max_pct[c] = std::max(max_pct[c], regret_pct[c]);
    }
  }
};

std::string row(const std::string& name, const Tally& t) {
  const auto pct = [&](std::size_t ok) { return 100.0 * double(ok) / double(t.cases); };
  // Of the exhaustive sweep's runs: the steered sweeps' runs against one exhaustive sweep per metric.
  const auto runs = [&](std::size_t used, std::size_t sweeps) {
    return t.exhaustive_runs == 0
               ? std::string("-")
               : fmt::format("{:.1f}%", 100.0 * double(used) / double(t.exhaustive_runs * sweeps));
  };
  std::string text = fmt::format("{:<22} {:>5}", name, t.cases);
  for (std::size_t c = 0; c < kColumns; ++c)
    text += fmt::format(" {:>7.1f}% {:>6.2f}%", pct(t.ok[c]), t.max_pct[c]);
  return text + fmt::format(" {:>7} {:>7}\n", runs(t.adaptive_runs, 1),
                            runs(t.steered_runs, bench_metrics().size()));
}

std::vector<Profile> bench_profiles() {
  return ww::bench::v100_bench_profiles(WATTWISE_REFERENCE_CSV, "wattwise-bench-adaptive");
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t first = argc > 2 ? std::strtoull(argv[1], nullptr, 10) : 1;
  const std::uint64_t last = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20;
  const auto started = std::chrono::steady_clock::now();
  const std::vector<Profile> profiles = bench_profiles();
  const auto metrics = bench_metrics();
  std::map<std::string, Tally> by_metric_sim, by_metric_replay;
  Tally sim_total, replay_total;
  std::size_t disagreements = 0;
  std::string per_profile;
  // The headline over the exhaustive, the default adaptive and the E-steered sweeps' runs, per group.
  std::map<std::string, ww::bench::HeadlineTally> headline;
  for (const auto& p : profiles) {
    const Curve curve = noise_free_curve(p);
    if (std::getenv("DEBUG_CURVE") && p.name == std::getenv("DEBUG_CURVE")) {
      for (const auto& m : metrics)
        for (double w : curve.limits)
          fmt::print(stderr, "{} {} {:.3f}\n", m.name(), w, regret_pct(curve, m, w));
    }
    const bool replayed = p.name.rfind("replay:", 0) == 0;
    if (const char* dump = std::getenv("DEBUG_DUMP")) {
      std::ofstream f(dump, std::ios::app);
      for (double w : curve.limits)
        f << fmt::format("curve {} {} {:.17g} {:.17g}\n", p.name, w, curve.at.at(w).time_s, curve.at.at(w).energy_j);
    }
    if (std::getenv("DEBUG_NOISEFREE")) {
      std::vector<ww::analysis::RunRecord> runs;
      for (unsigned k = 0; k < 2; ++k)  // repeats that agree exactly: no noise for the resamples to draw
        for (double w : curve.limits) runs.push_back(record(w, curve.at.at(w)));
      const AnalysisPicks picks = analysis_picks(runs);
      for (std::size_t i = 0; i < metrics.size(); ++i)
        fmt::print(stderr, "noise-free {} {}: optimum {} W, recommended {} W, regret {:.2f}%{}\n", p.name,
                   metrics[i].name(), true_optimum_w(curve, metrics[i]), picks.recommended[i],
                   regret_pct(curve, metrics[i], picks.recommended[i]),
                   picks.median_of_cubics[i] ? " (lack of fit: cubics)"
                   : picks.lack_of_fit[i]    ? " (lack of fit: quadratics, too few values for a cubic)"
                                             : "");
    }
    Tally profile_tally;
    for (std::uint64_t seed = first; seed <= last; ++seed) {
      const Outcome e = exhaustive(p, curve, seed);
      const Outcome a = adaptive(p, curve, seed);
      const SteeredOutcomes one = steered(p, curve, seed);
      // `sweep --adaptive --metric E --max-slowdown 10%`: steered by the headline itself.
      const Outcome limited = adaptive(p, curve, seed, false, 0, ww::analysis::kDefaultHeadlineSlowdown);
      for (auto* t : {&profile_tally, replayed ? &replay_total : &sim_total}) {
        t->exhaustive_runs += e.runs;
        t->adaptive_runs += a.runs;
        t->steered_runs += one.runs();
      }
      disagreements += a.disagreements;
      // Steered by the headline, the sweep's own pick is the closing line's: analyze's headline over its runs.
      disagreements += limited.picks.at(0) != limited.analysed.headline_w;
      for (const auto& [sweep, picks] : {std::pair{"exh", &e.analysed}, std::pair{"ada", &a.analysed},
                                         std::pair{"ada-1 (E)", &one.steered.at(0).analysed},
                                         std::pair{kLimitedSweep, &limited.analysed}}) {
        auto j = ww::bench::judge_headline(curve.at, kDefaultLimitW, ww::analysis::kDefaultHeadlineSlowdown,
                                           picks->headline_w, picks->measured_w);
        j.flagged = picks->headline_flagged;
        j.interval = picks->headline_interval;
        j.interval_from = picks->headline_interval_from;
        ww::bench::HeadlineTally& t =
            headline[fmt::format("{} {}", replayed ? "replayed" : "simulated", sweep)];
        t.max_slowdown_pct = 100 * ww::analysis::kDefaultHeadlineSlowdown;
        if (std::getenv("DEBUG_HEADLINE") && (j.regret_pct > 0.5 || t.over(j) || std::getenv("DEBUG_ALL")))
          fmt::print(stderr,
                     "headline {} seed {} {}: pick {} W (regret {:.2f}%, true slowdown {:.2f}%) truth {} W\n",
                     p.name, seed, sweep, j.pick_w, j.regret_pct, j.true_slowdown_pct, j.truth_w);
        t.add(j);
      }
      for (const auto& o : one.steered) disagreements += o.disagreements;
      for (std::size_t i = 0; i < metrics.size(); ++i) {
        const double truth = true_optimum_w(curve, metrics[i]);
        const auto covers = [&](const AnalysisPicks& a) {  // to the grid's half step
          return a.interval[i].first - 2.5 <= truth && truth <= a.interval[i].second + 2.5;
        };
        const auto width = [&](const AnalysisPicks& a) { return a.interval[i].second - a.interval[i].first + 5; };
        const AnalysisPicks& one_analysed = one.steered[i].analysed;
        for (auto* t : {&profile_tally, replayed ? &replay_total : &sim_total}) {
          for (const auto& [column, analysed] : {std::pair{kExhaustiveAnalyze, &e.analysed},
                                                 std::pair{kAdaptiveAnalyze, &a.analysed},
                                                 std::pair{kSteeredAnalyze, &one_analysed}}) {
            t->covered[column] += covers(*analysed);
            t->width_w[column] += width(*analysed);
          }
        }
        if (std::getenv("DEBUG_INTERVAL") && (!covers(e.analysed) || !covers(a.analysed)))
          fmt::print(stderr, "{} seed {} {}: truth {} exh [{:.1f}, {:.1f}] ada [{:.1f}, {:.1f}]\n", p.name, seed,
                     metrics[i].name(), truth, e.analysed.interval[i].first, e.analysed.interval[i].second,
                     a.analysed.interval[i].first, a.analysed.interval[i].second);
        const std::array<double, kColumns> regret = {regret_pct(curve, metrics[i], e.picks[i]),
                                                     regret_pct(curve, metrics[i], e.recommended[i]),
                                                     regret_pct(curve, metrics[i], a.recommended[i]),
                                                     regret_pct(curve, metrics[i], one_analysed.recommended[i])};
        profile_tally.add(regret);
        if (std::getenv("DEBUG_CASES") && (std::getenv("DEBUG_ALL") || regret[kAdaptiveAnalyze] > kRegretGoalPct || (std::getenv("DEBUG_EXH") && regret[kExhaustiveAnalyze] > kRegretGoalPct)))
          fmt::print(stderr, "{} seed {} {}: exh {} ({:.2f}%) exh-an {} ({:.2f}%) ada {} ({:.2f}%) runs {} ada-1 {} ({:.2f}%) runs {}\n", p.name, seed,
                     metrics[i].name(), e.picks[i], regret[kExhaustivePick], e.recommended[i], regret[kExhaustiveAnalyze], a.recommended[i],
                     regret[kAdaptiveAnalyze], a.runs, one_analysed.recommended[i], regret[kSteeredAnalyze], one.steered[i].runs);
        (replayed ? replay_total : sim_total).add(regret);
        (replayed ? by_metric_replay : by_metric_sim)[metrics[i].name()].add(regret);
      }
    }
    per_profile += row(p.name, profile_tally);
  }
  fmt::print(
      "# bench_adaptive_regret, seeds {}..{}; regret goal {}%; grid: every 5 W of the profile's range\n",
      first, last, kRegretGoalPct);
  fmt::print(
      "# columns: cases | within goal and max regret of: the exhaustive 31x5 sweep's lowest mean (exh), "
      "analyze's recommendation over its runs (exh-an), analyze's recommendation over the adaptive runs, "
      "which is the adaptive sweep's own (ada: steered by the four metrics at once, the default; ada-1: "
      "steered by the case's metric alone, --metric M, one sweep per metric) | adaptive runs / exhaustive "
      "runs (runs: ada's; runs-1: ada-1's four sweeps against four exhaustive ones)\n");
  std::string header = fmt::format("{:<22} {:>5}", "profile", "cases");
  for (const char* c : {"exh", "exh-an", "ada", "ada-1"})
    header += fmt::format(" {:>8} {:>7}", fmt::format("{} ok", c), fmt::format("{} max", c));
  header += fmt::format(" {:>7} {:>7}\n", "runs", "runs-1");
  fmt::print("{}{}", header, per_profile);
  fmt::print("\n{}", header);
  for (const auto& [name, t] : by_metric_sim) fmt::print("{}", row("simulated " + name, t));
  for (const auto& [name, t] : by_metric_replay) fmt::print("{}", row("replayed " + name, t));
  fmt::print("{}{}", row("ALL simulated", sim_total), row("ALL replayed", replay_total));
  for (const auto& [name, t] : {std::pair{"simulated", &sim_total}, std::pair{"replayed", &replay_total}})
    fmt::print("# {}: the fit's 90% interval of the optimum (+-2.5 W) holds the true optimum in {:.1f}% "
               "(exhaustive) / {:.1f}% (adaptive) / {:.1f}% (steered by one metric) of {} cases; mean width "
               "{:.1f} W / {:.1f} W / {:.1f} W\n",
               name, 100.0 * double(t->covered[kExhaustiveAnalyze]) / double(t->cases),
               100.0 * double(t->covered[kAdaptiveAnalyze]) / double(t->cases),
               100.0 * double(t->covered[kSteeredAnalyze]) / double(t->cases), t->cases,
               t->width_w[kExhaustiveAnalyze] / double(t->cases), t->width_w[kAdaptiveAnalyze] / double(t->cases),
               t->width_w[kSteeredAnalyze] / double(t->cases));
  // A/A: every limit runs as the reference; "beyond noise" claimed for analyze's recommendation.
  for (const bool replayed_group : {false, true}) {
    if (std::getenv("SKIP_AA")) break;
    std::size_t cases = 0, claims_exh = 0, claims_ada = 0, claims_one = 0;
    // The headline's "may be over the limit" flag, false here by construction: every pick's true slowdown is 0.
    std::size_t sweeps = 0, flags_exh = 0, flags_ada = 0, flags_one = 0, flags_limited = 0;
    for (const auto& p : profiles) {
      if ((p.name.rfind("replay:", 0) == 0) != replayed_group) continue;
      const Curve curve = noise_free_curve(p);
      for (std::uint64_t seed = first; seed <= last; ++seed) {
        const Outcome e = exhaustive(p, curve, seed, true);
        const Outcome a = adaptive(p, curve, seed, true);
        const SteeredOutcomes one = steered(p, curve, seed, true);
        const Outcome limited = adaptive(p, curve, seed, true, 0, ww::analysis::kDefaultHeadlineSlowdown);
        ++sweeps;
        flags_limited += limited.analysed.headline_flagged;
        flags_exh += e.analysed.headline_flagged;
        flags_ada += a.analysed.headline_flagged;
        flags_one += one.steered.at(0).analysed.headline_flagged;
        for (std::size_t i = 0; i < metrics.size(); ++i) {
          ++cases;
          claims_exh += e.analysed.beyond_noise[i];
          claims_ada += a.analysed.beyond_noise[i];
          claims_one += one.steered[i].analysed.beyond_noise[i];
        }
      }
    }
    fmt::print("# A/A {} (every limit runs as {} W): \"beyond noise\" claimed in {:.1f}% (exhaustive) / "
               "{:.1f}% (adaptive) / {:.1f}% (steered by one metric) of {} cases\n",
               replayed_group ? "replayed" : "simulated", kDefaultLimitW,
               100.0 * double(claims_exh) / double(cases), 100.0 * double(claims_ada) / double(cases),
               100.0 * double(claims_one) / double(cases), cases);
    fmt::print("# A/A {}: the headline flagged as maybe over the 10% limit in {} (exhaustive) / {} (adaptive) / {} "
               "(steered by E) / {} (steered by E at most 10% slower) of {} sweeps\n",
               replayed_group ? "replayed" : "simulated", flags_exh, flags_ada, flags_one, flags_limited, sweeps);
  }
  fmt::print("# adaptive sweep's own pick differs from analyze's over its runs in {} cases (ada and ada-1; "
             "{}: its pick against analyze's headline)\n",
             disagreements, kLimitedSweep);
  fmt::print("# fitted recommendations (every sweep, A/A included): {}; median outside its own 90% interval: "
             "{}; median of resampled cubics: {}; quadratic misfits but too few values for a cubic: {}\n",
             decision_counts.fitted, decision_counts.median_outside, decision_counts.cubics,
             decision_counts.misfit_too_few_for_cubic);
  fmt::print(
      "# headline (lowest energy at most 10% slower than {} W, analyze's default): its energy regret "
      "against the noise-free curve's lowest energy within 1.10 x {} W's time, in cases within 0.5% / "
      "1%, max and mean; true slowdown (noise-free time against {} W's) over 10.5%, its max; both ok "
      "(within 0.5% and not over 10.5%); the pick is the truth; within one 5 W step of it; the sweep ran the "
      "truth; a negative regret "
      "is a pick over the limit; ada-1 (E): the sweep steered by E alone (--metric E), which closes with "
      "the same headline; {}: steered by the headline itself (--metric E --max-slowdown 10%)\n",
      kDefaultLimitW, kDefaultLimitW, kDefaultLimitW, kLimitedSweep);
  fmt::print("{}", ww::bench::headline_header());
  for (const char* group : {"simulated", "replayed"})
    for (const char* sweep : {"exh", "ada", "ada-1 (E)", kLimitedSweep})
      fmt::print("{}", ww::bench::headline_row(fmt::format("{} {}", group, sweep),
                                               headline.at(fmt::format("{} {}", group, sweep))));
  fmt::print("{}", ww::bench::interval_header());
  for (const char* group : {"simulated", "replayed"})
    for (const char* sweep : {"exh", "ada", "ada-1 (E)", kLimitedSweep})
      fmt::print("{}", ww::bench::interval_row(fmt::format("{} {}", group, sweep),
                                               headline.at(fmt::format("{} {}", group, sweep))));
  // Everything above: the sweeps, the A/A sweeps (unless SKIP_AA) and the headline's tally.
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print("# {:.1f} s wall\n", elapsed_s);
  return 0;
}
