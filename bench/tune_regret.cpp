// The online tuner against the exhaustive optimum and a Zeus-like baseline (docs/evidence/tune-benchmark.md):
// the six simulated V100 models and the same six replayed from the published table
// (shared/reference/v100_cnn_power_caps.csv), seeds A..B, metrics E, EDP, EDS(2.0) and E under a 10% slowdown
// budget. Each case is a job of 10,000 iterations in virtual time (tune::simulate: 1% time and 2% energy
// noise per iteration, as measured on the H100, and the drift of a real GPU, sim::DriftSpec::typical(): a
// warm-up of +2.5% energy over the first ~1.5 minutes, ~1% wander over minutes, neighbouring iterations
// correlated by 0.4). Reported per case: profiling iterations until settled, the regret of the settled limit
// (its metric on the noise-free curve against the best of the noise-free curve at every 5 W, in %), the
// whole job's energy and time against an oracle that held the best limit from the start, and the A/A test:
// the same job as a dry run (every candidate at the start value), which must hold the start value.
// Usage: bench_tune_regret [FIRST_SEED LAST_SEED [CORRELATION [DRIFT]]] (CORRELATION: how much of one
// iteration's noise carries over to the next, default 0.4; DRIFT: 0 turns warm-up and wander off;
// DEBUG_CASES=1 lists the cases that miss the goal on stderr; NO_AA=1 skips the dry runs).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics.hpp"
#include "experiment/replay_table.hpp"
#include "tune/simulated_tune.hpp"
#include "v100_bench_profiles.hpp"

namespace ww = wattwise;
using ww::analysis::MetricSpec;
using ww::tune::IterationMean;
using ww::tune::SimulatedJob;

namespace {

using ww::bench::Profile;

constexpr double kRegretGoalPct = 1.0;
constexpr std::uint64_t kIterationBudget = 200;
constexpr std::uint64_t kJobIterations = 10000;
constexpr double kZeusStepW = 25;
constexpr std::uint64_t kZeusIterations = 50;

struct Objective {
  std::string name;
  MetricSpec metric;
  std::optional<double> max_slowdown;
};

std::vector<Objective> objectives() {
  const MetricSpec e = ww::analysis::parse_metric("E");
  return {{"E", e, std::nullopt},
          {"EDP", ww::analysis::parse_metric("edp"), std::nullopt},
          {"EDS(k=2.0)", ww::analysis::parse_metric("eds:2.0"), std::nullopt},
          {"E, slowdown<=10%", e, 0.10}};
}

// The noise-free curve on the tuner's grid, and its best feasible limit for one objective.
struct Curve {
  std::vector<double> limits_w;
  std::map<double, IterationMean> at;
  IterationMean start;
};

Curve noise_free_curve(const SimulatedJob& job, const ww::tune::TunerConfig& config) {
  Curve c;
  for (double w = config.min_value; w < config.max_value - 1e-9; w += config.step) c.limits_w.push_back(w);
  c.limits_w.push_back(config.max_value);
  for (double w : c.limits_w) c.at[w] = job.mean_at(w);
  c.start = job.mean_at(config.start_value);
  return c;
}

double metric_at(const Curve& c, const Objective& o, double limit_w) {
  const IterationMean m = c.at.at(limit_w);
  return ww::analysis::metric_value(o.metric, m.energy_j, m.time_s, {c.start.energy_j, c.start.time_s});
}

// How far the noise-free time at `limit_w` lies over the budget, in % of the budget (<= 0: within it).
double over_budget_pct(const Curve& c, const Objective& o, double limit_w) {
  if (!o.max_slowdown) return 0;
  return 100 * (c.at.at(limit_w).time_s / (c.start.time_s * (1 + *o.max_slowdown)) - 1);
}

double best_limit(const Curve& c, const Objective& o) {
  double best = c.limits_w.back();
  for (double w : c.limits_w)
    if (over_budget_pct(c, o, w) <= 0 && metric_at(c, o, w) < metric_at(c, o, best)) best = w;
  return best;
}

// Regret in % against the best limit within the budget on the noise-free curve. A pick over the budget by
// more than the time noise a tuner can resolve (kBudgetNoisePct) is a miss (infinite regret); one over it by
// less is judged on its metric (never below 0: it bought energy with a sliver of time).
constexpr double kBudgetNoisePct = 0.5;
double regret_pct(const Curve& c, const Objective& o, std::optional<double> limit_w) {
  if (!limit_w || over_budget_pct(c, o, *limit_w) > kBudgetNoisePct)
    return std::numeric_limits<double>::infinity();
  return std::max(0.0, 100 * (metric_at(c, o, *limit_w) / metric_at(c, o, best_limit(c, o)) - 1));
}

struct Outcome {
  std::optional<double> limit_w;
  std::uint64_t profiling = 0;
  std::uint64_t retunes = 0;  // these jobs change no phase: every retune is a false alarm
  std::uint64_t waited = 0;   // at the start value, for stationary iterations
  double energy_j = 0;
  double time_s = 0;
};

// Holds `limit_w` for `iterations` iterations, adding their noisy time and energy to `o`; `job_s` is the
// job's clock (its drift's), advanced by them.
void hold(const SimulatedJob& job, double limit_w, std::uint64_t iterations,
          ww::tune::IterationNoiseSource& noise, double& job_s, Outcome& o) {
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const IterationMean it = job.iterate(limit_w, i == 0 ? 0 : 1e9, job_s, noise);
    job_s += it.time_s;
    o.energy_j += it.energy_j;
    o.time_s += it.time_s;
  }
}

// Zeus-like: every limit from the highest down in 25 W steps, 50 iterations each, then the best measured
// mean holds for the rest of the job.
Outcome zeus(const SimulatedJob& job, const Curve& c, const Objective& obj, std::uint64_t seed,
             const ww::tune::IterationNoise& spread) {
  ww::tune::IterationNoiseSource noise(seed * 7919 + 17, spread);
  Outcome o;
  double job_s = 0;
  const double top_w = c.limits_w.back();
  std::vector<std::pair<double, Outcome>> measured;
  for (double w = top_w; w >= c.limits_w.front() - 1e-9; w -= kZeusStepW) {
    Outcome here;
    hold(job, w, kZeusIterations, noise, job_s, here);
    o.energy_j += here.energy_j, o.time_s += here.time_s;
    measured.emplace_back(w, here);
  }
  const Outcome& top = measured.front().second;
  double best_score = std::numeric_limits<double>::infinity();
  for (const auto& [w, m] : measured) {
    if (obj.max_slowdown && m.time_s > top.time_s * (1 + *obj.max_slowdown)) continue;
    const double score =
        ww::analysis::metric_value(obj.metric, m.energy_j, m.time_s, {top.energy_j, top.time_s});
    if (score < best_score) best_score = score, o.limit_w = w;
  }
  o.profiling = kZeusIterations * (measured.size() - 1);
  hold(job, *o.limit_w, kJobIterations - kZeusIterations * measured.size(), noise, job_s, o);
  return o;
}

Outcome oracle(const SimulatedJob& job, const Curve& c, const Objective& obj, std::uint64_t seed,
               const ww::tune::IterationNoise& spread) {
  ww::tune::IterationNoiseSource noise(seed * 7919 + 17, spread);
  Outcome o;
  o.limit_w = best_limit(c, obj);
  double job_s = 0;
  hold(job, *o.limit_w, kJobIterations, noise, job_s, o);
  return o;
}

Outcome tuned(const Profile& p, const Objective& obj, std::uint64_t seed,
              const ww::tune::IterationNoise& spread, bool dry_run = false) {
  ww::tune::TunerConfig config;
  config.metric = obj.metric;
  config.max_slowdown = obj.max_slowdown;
  const auto r = ww::tune::simulate(p.simulate, config, seed, kJobIterations, spread, dry_run,
                                     ww::experiment::read_replay_table);
  if (const char* trace = std::getenv("DEBUG_TRACE");
      trace && fmt::format("{} {} {}", p.name, obj.name, seed) == trace)
    for (const auto& d : r.decisions)
      fmt::print(stderr, "  @{} -> {} W: {:.4f} [{:.4f}, {:.4f}] n={} {}\n", d.at_iteration, d.value,
                 d.estimate, d.interval_low, d.interval_high, d.iterations, d.reason);
  // A search that never settled spent all its iterations profiling.
  const auto retunes = static_cast<std::uint64_t>(
      std::count_if(r.decisions.begin(), r.decisions.end(),
                    [](const ww::tune::Decision& d) { return d.kind == ww::tune::DecisionKind::kRetune; }));
  Outcome o{r.settled_value, r.settled_value ? r.profiling_iterations : kJobIterations, retunes,
            r.stationary_wait_iterations};
  o.energy_j = r.energy_j;
  o.time_s = r.time_s;
  return o;
}

struct Tally {
  std::size_t cases = 0, within = 0, cheap = 0, goal = 0, zeus_within = 0, retunes = 0;
  std::size_t aa_runs = 0, aa_held = 0;  // dry runs, and those that held the start value
  std::vector<std::uint64_t> waited;     // iterations waited for stationary ones (not profiling)
  double max_regret = 0, zeus_max_regret = 0;
  std::vector<std::uint64_t> profiling;
  // Sums of % against the oracle over the whole job: energy, time and the metric of the job's means.
  double energy_over = 0, time_over = 0, metric_over = 0;
  double zeus_energy_over = 0, zeus_time_over = 0, zeus_metric_over = 0;

  void add(const Objective& obj, double regret, const Outcome& t, double zeus_regret, const Outcome& z,
           const Outcome& oracle, bool aa_held_start) {
    ++cases;
    ++aa_runs;
    aa_held += aa_held_start;
    waited.push_back(t.waited);
    retunes += t.retunes;
    within += regret <= kRegretGoalPct;
    cheap += t.profiling <= kIterationBudget;
    goal += regret <= kRegretGoalPct && t.profiling <= kIterationBudget;
    zeus_within += zeus_regret <= kRegretGoalPct;
    max_regret = std::max(max_regret, regret);
    zeus_max_regret = std::max(zeus_max_regret, zeus_regret);
    profiling.push_back(t.profiling);
    energy_over += 100 * (t.energy_j / oracle.energy_j - 1);
    time_over += 100 * (t.time_s / oracle.time_s - 1);
    zeus_energy_over += 100 * (z.energy_j / oracle.energy_j - 1);
    zeus_time_over += 100 * (z.time_s / oracle.time_s - 1);
    // The same number of iterations in all three jobs: the metric of their totals, normalised to the
    // oracle's.
    const ww::analysis::ReferencePoint ref{oracle.energy_j, oracle.time_s};
    const double oracle_metric = ww::analysis::metric_value(obj.metric, oracle.energy_j, oracle.time_s, ref);
    metric_over +=
        100 * (ww::analysis::metric_value(obj.metric, t.energy_j, t.time_s, ref) / oracle_metric - 1);
    zeus_metric_over +=
        100 * (ww::analysis::metric_value(obj.metric, z.energy_j, z.time_s, ref) / oracle_metric - 1);
  }
};

std::string row(const std::string& name, Tally t) {
  if (t.cases == 0) return {};  // left out by DEBUG_ONLY
  const auto pct = [&](std::size_t n) { return 100.0 * double(n) / double(t.cases); };
  const auto mean = [&](double sum) { return sum / double(t.cases); };
  std::sort(t.profiling.begin(), t.profiling.end());
  std::sort(t.waited.begin(), t.waited.end());
  return fmt::format(
      "{:<32} {:>5} {:>7.1f}% {:>6.1f}% {:>7.1f}% {:>6.2f}% {:>6} {:>6} {:>6} | {:>4}/{:<4} | {:>7.1f}% "
      "{:>6.2f}% | {:>+6.2f}% {:>+6.2f}% {:>+6.2f}% | {:>+6.2f}% {:>+6.2f}% {:>+6.2f}%\n",
      name, t.cases, pct(t.goal), pct(t.within), pct(t.cheap), t.max_regret,
      t.profiling[t.profiling.size() / 2], t.profiling.back(), t.waited[t.waited.size() / 2], t.aa_held,
      t.aa_runs, pct(t.zeus_within), t.zeus_max_regret, mean(t.energy_over), mean(t.time_over),
      mean(t.metric_over), mean(t.zeus_energy_over), mean(t.zeus_time_over), mean(t.zeus_metric_over));
}

std::string header() {
  return fmt::format(
      "{:<32} {:>5} {:>8} {:>7} {:>8} {:>7} {:>6} {:>6} {:>6} | {:>9} | {:>8} {:>7} | {:>7} {:>7} {:>7} | "
      "{:>7} {:>7} {:>7}\n",
      "case", "cases", "goal", "<=1%", "<=200it", "maxreg", "p50it", "maxit", "p50wt", "A/A held", "zeus<=1%",
      "zmaxreg", "dE", "dt", "dM", "zeus dE", "zeus dt", "zeus dM");
}

std::vector<Profile> bench_profiles() {
  return ww::bench::v100_bench_profiles(WATTWISE_REFERENCE_CSV, "wattwise-bench-tune");
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t first = argc > 2 ? std::strtoull(argv[1], nullptr, 10) : 1;
  const std::uint64_t last = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20;
  ww::tune::IterationNoise spread = ww::tune::IterationNoise::typical();
  if (argc > 3) spread.drift.iteration_correlation = std::strtod(argv[3], nullptr);
  if (argc > 4 && std::strtod(argv[4], nullptr) == 0)
    spread.drift.warmup_fraction = spread.drift.wander_fraction = 0;
  const auto started = std::chrono::steady_clock::now();
  std::map<std::string, Tally> by_objective;
  Tally sim_total, replay_total, sim_metrics, replay_metrics;  // metrics: E, EDP, EDS without a budget
  std::string per_case;
  for (const Profile& p : bench_profiles()) {
    const SimulatedJob job(p.simulate, ww::tune::TuneKnob::kPowerLimit, ww::experiment::read_replay_table);
    const Curve curve = noise_free_curve(job, job.with_gpu_range({}));
    const bool replayed = p.name.starts_with("replay:");
    for (const Objective& obj : objectives()) {
      // DEBUG_ONLY=SUBSTRING: only the cases whose "profile objective" contains it (for DEBUG_TRACE).
      if (const char* only = std::getenv("DEBUG_ONLY");
          only && (p.name + " " + obj.name).find(only) == std::string::npos)
        continue;
      if (std::getenv("DEBUG_ONLY"))
        for (double w : curve.limits_w)
          fmt::print(stderr, "  curve {} W: time {:.4f}, metric {:.4f}\n", w,
                     curve.at.at(w).time_s / curve.start.time_s, metric_at(curve, obj, w));
      Tally t;
      for (std::uint64_t seed = first; seed <= last; ++seed) {
        const Outcome a = tuned(p, obj, seed, spread);
        const Outcome aa = std::getenv("NO_AA") ? Outcome{} : tuned(p, obj, seed, spread, true);
        const bool aa_held = aa.limit_w && *aa.limit_w == curve.limits_w.back();
        const Outcome z = zeus(job, curve, obj, seed, spread);
        const Outcome best = oracle(job, curve, obj, seed, spread);
        const double regret = regret_pct(curve, obj, a.limit_w);
        const double zeus_regret = regret_pct(curve, obj, z.limit_w);
        for (Tally* each : {&t, &by_objective[(replayed ? "replayed " : "simulated ") + obj.name],
                            replayed ? &replay_total : &sim_total})
          each->add(obj, regret, a, zeus_regret, z, best, aa_held);
        if (!obj.max_slowdown)
          (replayed ? replay_metrics : sim_metrics).add(obj, regret, a, zeus_regret, z, best, aa_held);
        if (std::getenv("DEBUG_CASES") && !aa_held)
          fmt::print(stderr, "{} {} seed {}: A/A dry run settled at {}\n", p.name, obj.name, seed,
                     aa.limit_w.value_or(-1));
        if (std::getenv("DEBUG_CASES") && (regret > kRegretGoalPct || a.profiling > kIterationBudget))
          fmt::print(stderr, "{} {} seed {}: settled {} (best {}), regret {:.2f}%, {} profiling iterations\n",
                     p.name, obj.name, seed, a.limit_w.value_or(-1), best_limit(curve, obj), regret,
                     a.profiling);
      }
      per_case += row(p.name + " " + obj.name, t);
    }
  }
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print(
      "# bench_tune_regret, seeds {}..{}; goal: regret <= {}% in <= {} profiling iterations; job {} "
      "iterations; noise per iteration: {}% time, {}% energy, correlation {} between neighbours; drift: "
      "warm-up {}% (tau {} s), wander {}%\n",
      first, last, kRegretGoalPct, kIterationBudget, kJobIterations, 100 * spread.time_cv,
      100 * spread.energy_cv, spread.drift.iteration_correlation, 100 * spread.drift.warmup_fraction,
      spread.drift.warmup_tau_s, 100 * spread.drift.wander_fraction);
  fmt::print(
      "# columns: cases | goal met (both) | regret <= 1% | profiling <= 200 | max regret | median and max "
      "profiling iterations | median iterations waited for stationary ones (not profiling) | A/A: dry runs "
      "that held the start value | Zeus-like (25 W x 50 it): regret <= 1%, max regret | the whole job "
      "against an oracle holding the best limit from the start, mean over seeds: the tuner's energy, time "
      "and metric (dE, dt, dM), the same for Zeus-like\n");
  fmt::print("{}{}\n{}", header(), per_case, header());
  for (const auto& [name, t] : by_objective) fmt::print("{}", row(name, t));
  fmt::print("{}{}", row("simulated E, EDP, EDS(k=2.0)", sim_metrics),
             row("replayed E, EDP, EDS(k=2.0)", replay_metrics));
  fmt::print("{}{}", row("ALL simulated", sim_total), row("ALL replayed", replay_total));
  fmt::print("# A/A dry runs holding the start value: {} of {}\n", sim_total.aa_held + replay_total.aa_held,
             sim_total.aa_runs + replay_total.aa_runs);
  fmt::print("# false retunes (no job changes phase): {} in {} simulated and {} replayed jobs\n",
             sim_total.retunes + replay_total.retunes, sim_total.cases, replay_total.cases);
  fmt::print("# {:.1f} s wall\n", elapsed_s);
  return 0;
}
