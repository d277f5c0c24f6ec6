// The regret of recommendations: the exhaustive 31 x 5 power-limit sweep against `sweep --adaptive` with
// its default flags, on the six simulated V100 models and on the same models replayed from the published
// table (shared/reference/v100_cnn_power_caps.csv), for seeds A..B. In process, on the simulator's model
// (sim::run_unsampled: the job's time and exact energy, no sampler and no store), so 20 seeds x 12
// profiles x ~200 runs take seconds. Regret = metric of the recommended limit on the noise-free curve
// against the noise-free curve's best, in %. Usage: bench_adaptive_regret [FIRST_SEED LAST_SEED]
// (DEBUG_CASES=1 lists the adaptive cases over the goal on stderr; DEBUG_CURVE=v100:MODEL its regret curve.)
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "experiment/adaptive_sweep.hpp"
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
  ww::sim::Simulation sim = ww::sim::make_simulation(p.simulate, options);
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
};

AnalysisPicks analysis_picks(const std::vector<ww::analysis::RunRecord>& runs) {
  ww::analysis::AnalysisOptions options;
  options.default_setting = ww::analysis::Setting{{"power_limit_w", kDefaultLimitW}};
  options.metrics = bench_metrics();
  const auto analysis = ww::analysis::analyze(runs, options);
  AnalysisPicks picks;
  for (const auto& rec : analysis.recommendations) {
    picks.recommended.push_back(rec.setting.at("power_limit_w"));
    picks.lowest_mean.push_back(analysis.settings.at(rec.best_index).setting.at("power_limit_w"));
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
  std::vector<double> picks;        // per metric: the sweep's own (adaptive: fitted; exhaustive: lowest mean)
  std::vector<double> recommended;  // per metric: analyze's recommendation over the same runs
  std::size_t runs = 0;
};

Outcome exhaustive(const Profile& p, const Curve& c, std::uint64_t seed) {
  ww::sim::Simulation sim = simulation(p, true);
  std::vector<ww::analysis::RunRecord> runs;
  std::uint64_t index = 0;
  for (unsigned k = 0; k < kExhaustiveRepeats; ++k)
    for (double w : c.limits) runs.push_back(record(w, run_at(sim, w, seed * 1000003 + index++)));
  const AnalysisPicks analysed = analysis_picks(runs);
  Outcome o{analysed.lowest_mean, analysed.recommended, runs.size()};
  o.runs = runs.size();
  return o;
}

Outcome adaptive(const Profile& p, const Curve& c, std::uint64_t seed) {
  ww::experiment::AdaptiveConfig config = ww::experiment::default_adaptive_config(
      "power_limit_w", c.limits, kDefaultLimitW, bench_metrics(), seed);
  ww::sim::Simulation sim = simulation(p, true);
  std::vector<ww::experiment::AdaptiveObservation> obs;
  std::vector<ww::analysis::RunRecord> runs;
  for (;;) {
    const auto d = ww::experiment::decide_next(config, obs);
    if (!d.next) {
      Outcome o;
      for (const auto& b : d.best) o.picks.push_back(b.pick_value);
      o.recommended = analysis_picks(runs).recommended;
      o.runs = obs.size();
      return o;
    }
    const auto r = run_at(sim, *d.next, seed * 1000003 + obs.size());
    obs.push_back({*d.next, r.time_s, r.energy_j});
    runs.push_back(record(*d.next, r));
  }
}

// The four recommendations compared, in column order.
enum Column { kExhaustivePick, kExhaustiveAnalyze, kAdaptivePick, kAdaptiveAnalyze, kColumns };

struct Tally {
  std::size_t cases = 0;
  std::array<std::size_t, kColumns> ok{};
  std::array<double, kColumns> max_pct{};
  std::size_t exhaustive_runs = 0, adaptive_runs = 0;
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
  const std::string runs =
      t.exhaustive_runs == 0
          ? "-"
          : fmt::format("{:.1f}%", 100.0 * double(t.adaptive_runs) / double(t.exhaustive_runs));
  std::string text = fmt::format("{:<22} {:>5}", name, t.cases);
  for (std::size_t c = 0; c < kColumns; ++c)
    text += fmt::format(" {:>7.1f}% {:>6.2f}%", pct(t.ok[c]), t.max_pct[c]);
  return text + fmt::format(" {:>7}\n", runs);
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
  std::string per_profile;
  for (const auto& p : profiles) {
    const Curve curve = noise_free_curve(p);
    if (std::getenv("DEBUG_CURVE") && p.name == std::getenv("DEBUG_CURVE")) {
      for (const auto& m : metrics)
        for (double w : curve.limits)
          fmt::print(stderr, "{} {} {:.3f}\n", m.name(), w, regret_pct(curve, m, w));
    }
    const bool replayed = p.name.rfind("replay:", 0) == 0;
    Tally profile_tally;
    for (std::uint64_t seed = first; seed <= last; ++seed) {
      const Outcome e = exhaustive(p, curve, seed);
      const Outcome a = adaptive(p, curve, seed);
      for (auto* t : {&profile_tally, replayed ? &replay_total : &sim_total}) {
        t->exhaustive_runs += e.runs;
        t->adaptive_runs += a.runs;
      }
      for (std::size_t i = 0; i < metrics.size(); ++i) {
        const std::array<double, kColumns> regret = {
            regret_pct(curve, metrics[i], e.picks[i]), regret_pct(curve, metrics[i], e.recommended[i]),
            regret_pct(curve, metrics[i], a.picks[i]), regret_pct(curve, metrics[i], a.recommended[i])};
        profile_tally.add(regret);
        if (std::getenv("DEBUG_CASES") && regret[kAdaptivePick] > kRegretGoalPct)
          fmt::print(stderr, "{} seed {} {}: exh {} ({:.2f}%) ada {} ({:.2f}%) runs {}\n", p.name, seed,
                     metrics[i].name(), e.picks[i], regret[kExhaustivePick], a.picks[i],
                     regret[kAdaptivePick], a.runs);
        (replayed ? replay_total : sim_total).add(regret);
        (replayed ? by_metric_replay : by_metric_sim)[metrics[i].name()].add(regret);
      }
    }
    per_profile += row(p.name, profile_tally);
  }
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print(
      "# bench_adaptive_regret, seeds {}..{}; regret goal {}%; grid: every 5 W of the profile's range\n",
      first, last, kRegretGoalPct);
  fmt::print(
      "# columns: cases | within goal and max regret of: the exhaustive 31x5 sweep's lowest mean (exh), "
      "analyze's recommendation over its runs (exh-an), the adaptive sweep's own pick (ada), analyze's "
      "recommendation over the adaptive runs (ada-an) | adaptive runs / exhaustive runs\n");
  std::string header = fmt::format("{:<22} {:>5}", "profile", "cases");
  for (const char* c : {"exh", "exh-an", "ada", "ada-an"})
    header += fmt::format(" {:>8} {:>7}", fmt::format("{} ok", c), fmt::format("{} max", c));
  header += fmt::format(" {:>7}\n", "runs");
  fmt::print("{}{}", header, per_profile);
  fmt::print("\n{}", header);
  for (const auto& [name, t] : by_metric_sim) fmt::print("{}", row("simulated " + name, t));
  for (const auto& [name, t] : by_metric_replay) fmt::print("{}", row("replayed " + name, t));
  fmt::print("{}{}", row("ALL simulated", sim_total), row("ALL replayed", replay_total));
  fmt::print("# {:.1f} s wall\n", elapsed_s);
  return 0;
}
