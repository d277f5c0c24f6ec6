// Replays a real GPU's trace (measure --trace) through the energy accounting, offline: how consistent the
// per-phase figures are (per-iteration CV, on-phase power) and how they move when the counter is read
// sparsely. A trace taken with dense counter reads (--counter-interval 10) can be thinned to what the
// phase-locked schedule would have read, so one GPU run answers "what would the default have said" for
// every candidate schedule (docs/evidence/sampler-replay.txt; its limits: docs/evidence/sampler-h100.md).
//
//   bench_replay_trace TRACE.csv PHASES.csv [--gpu N] [--keep-every-posting K | --schedule K] [--phase NAME]...
//   bench_replay_trace TRACE.csv PHASES.csv --checks [--job-gpus N] [--power-limit W]
//
// --keep-every-posting K: keep only the first read after every K-th counter posting (K = 1: one read per
// posting; the default schedule reads after every 5th). Without it every read is kept.
// With reads thinned, every phase is also accounted from all the trace's reads (dense, --counter-interval
// 10: the closest to the truth a trace has) and the columns "bar J" and "in bar %" say how wide the thinned
// figures' error bars are and how often the dense figure lies inside them (docs/evidence/energy-checks.md).
// --with-reference-bar: "in bar" against both bars in quadrature (the thinned figure's and the dense one's): a
// dense trace read on a busy node carries bars of its own (held-up reads), and a miss there may be its error.
// --checks: the whole run accounted again as `measure` does today (measure::account_checked), every GPU:
// the invariants, the fallback, each GPU's energy with its bar; --job-gpus N: the first N GPUs ran the job,
// the others idle; --power-limit W: every GPU's highest power limit.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "measure/energy_checks.hpp"
#include "report/trace_replay.hpp"
#include "sampling/counter_schedule.hpp"
#include "sampling/energy_accounting.hpp"

namespace ww = wattwise;
using ww::Nanos;
using ww::sampling::CounterReading;
using ww::sampling::GpuTrace;

namespace {

// The first read after every k-th posting: a posting is a change of value between two reads.
std::vector<CounterReading> keep_every_posting(const std::vector<CounterReading>& reads, unsigned k) {
  std::vector<CounterReading> kept;
  unsigned postings = 0;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    if (i == 0 || i + 1 == reads.size()) {
      kept.push_back(reads[i]);
      continue;
    }
    if (reads[i].energy_mj != reads[i - 1].energy_mj && ++postings % k == 0) kept.push_back(reads[i]);
  }
  return kept;
}

// What the phase-locked schedule (counter_schedule.hpp) would have read, `postings_per_read` postings apart:
// the schedule is asked when its next read is due and given the first dense read that began then or later
// (a dense trace reads every ~10 ms, so that is at most ~10 ms after the read it planned).
std::vector<CounterReading> as_scheduled(const std::vector<CounterReading>& reads, unsigned postings_per_read) {
  std::vector<CounterReading> kept;
  if (reads.empty()) return kept;
  ww::sampling::CounterScheduleConfig config;
  config.postings_per_read = postings_per_read;
  ww::sampling::CounterSchedule schedule(config, reads.front().t - reads.front().read_cost);
  std::size_t i = 0;
  while (true) {
    while (i < reads.size() && reads[i].t - reads[i].read_cost < schedule.next_read()) ++i;
    if (i >= reads.size()) break;
    kept.push_back(reads[i]);
    schedule.on_read(reads[i].t - reads[i].read_cost, reads[i].t, reads[i].energy_mj);
    ++i;
  }
  if (kept.back().t != reads.back().t) kept.push_back(reads.back());  // the tail's dense reads, as at a job's end
  return kept;
}

// The whole run accounted as `measure` does: checks, fallback, bars.
void print_checks(ww::measure::Measurement m) {
  for (const auto& line : ww::measure::account_checked(m, /*judge_starvation=*/true)) fmt::print("{}\n", line);
  fmt::print("checks {}: {}\n", m.checks.passed() ? "passed" : "FAILED", fmt::join(m.checks.checked, ", "));
  for (const auto& g : m.gpu_energy) {
    fmt::print("GPU {} ({}): {:.3f} +- {:.3f} J, avg {:.1f} W, peak {:.1f} W{}\n", g.gpu.index,
               g.used_by_job ? "job" : "idle", g.energy_j.value_or(0), g.energy_uncertainty_j,
               g.avg_power_w.value_or(0), g.peak_power_w.value_or(0),
               g.counter_only ? ", the counter alone" : "");
  }
}

struct Stats {
  std::size_t n = 0;
  double mean = 0;
  double cv_pct = 0;
};

Stats stats(const std::vector<double>& values) {
  Stats s;
  s.n = values.size();
  if (s.n == 0) return s;
  double sum = 0, sq = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n < 2) return s;  // one phase (a window marked once): its figure, no spread
  for (double v : values) sq += (v - s.mean) * (v - s.mean);
  s.cv_pct = 100 * std::sqrt(sq / static_cast<double>(s.n - 1)) / s.mean;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"replay a measured trace through the energy accounting"};
  std::string trace_path, phases_path;
  unsigned gpu = 0, every = 0, schedule = 0;
  std::vector<std::string> names;
  bool checks = false;
  bool with_reference_bar = false;
  std::size_t job_gpus = 0;
  std::optional<double> power_limit_w;
  app.add_option("trace", trace_path)->required();
  app.add_option("phases", phases_path)->required();
  app.add_option("--gpu", gpu);
  app.add_option("--keep-every-posting", every);
  app.add_option("--schedule", schedule, "emulate the phase-locked schedule reading every N postings");
  app.add_option("--phase", names);
  app.add_flag("--with-reference-bar", with_reference_bar, "in bar: against the thinned and dense bars in quadrature");
  app.add_flag("--checks", checks, "account the whole run as measure does: invariants, fallback, error bars");
  app.add_option("--job-gpus", job_gpus, "with --checks: the first N GPUs ran the job (default: all)");
  app.add_option("--power-limit", power_limit_w, "with --checks: every GPU's highest power limit, W");
  CLI11_PARSE(app, argc, argv);
  try {
    const ww::report::ReplayedRun run =
        ww::report::read_replayed_run(trace_path, phases_path, {job_gpus, power_limit_w});
    if (checks) {
      print_checks(run.measurement);
      return 0;
    }
    GpuTrace trace = ww::report::read_gpu_trace_csv(trace_path, gpu);
    const GpuTrace dense = trace;
    const std::size_t all_reads = trace.energy.size();
    if (every > 0) trace.energy = keep_every_posting(trace.energy, every);
    if (schedule > 0) trace.energy = as_scheduled(trace.energy, schedule);
    const ww::sampling::EnergyAccounting accounting(trace);
    const ww::sampling::EnergyAccounting dense_accounting(dense);
    const bool thinned = trace.energy.size() < all_reads;
    const auto alignment = accounting.alignment();
    fmt::print("counter reads {} of {}; samples {}; alignment offset {:.1f} ms, scale {:.4f}, {} intervals\n",
               trace.energy.size(), all_reads, trace.power_samples.size(),
               alignment ? ww::to_seconds(alignment->offset) * 1000 : 0.0, alignment ? alignment->scale : 0.0,
               alignment ? alignment->intervals : 0);
    if (names.empty()) names = {"iteration"};
    const auto& phases = run.measurement.phases;
    fmt::print("{:<12} {:>5} {:>10} {:>8} {:>10} {:>8} {:>10} {:>8} {:>8} {:>8}\n", "phase", "n", "energy J",
               "CV %", "measured J", "CV %", "power W", "CV %", "bar J", "in bar %");
    for (const auto& name : names) {
      std::vector<double> replayed, measured, power;
      double bar_sum = 0;
      std::size_t inside = 0;
      for (std::size_t k = 0; k < phases.size(); ++k) {
        const auto& p = phases[k];
        if (p.name != name) continue;
        const auto e = accounting.energy(p.begin, p.end);
        if (!e.joules) continue;
        replayed.push_back(*e.joules);
        measured.push_back(run.measured_phase_j[k].value_or(0));
        power.push_back(*e.joules / ww::to_seconds(p.end - p.begin));
        bar_sum += e.uncertainty_j;
        const auto truth = dense_accounting.energy(p.begin, p.end);
        const double bar = with_reference_bar ? std::hypot(e.uncertainty_j, truth.uncertainty_j) : e.uncertainty_j;
        if (truth.joules && std::abs(*truth.joules - *e.joules) <= bar) ++inside;
      }
      const Stats r = stats(replayed), m = stats(measured), w = stats(power);
      const double n = std::max<double>(1, static_cast<double>(replayed.size()));
      fmt::print("{:<12} {:>5} {:>10.3f} {:>8.2f} {:>10.3f} {:>8.2f} {:>10.2f} {:>8.2f} {:>8.3f} {:>8}\n", name, r.n,
                 r.mean, r.cv_pct, m.mean, m.cv_pct, w.mean, w.cv_pct, bar_sum / n,
                 thinned ? fmt::format("{:.1f}", 100.0 * static_cast<double>(inside) / n) : "-");
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_replay_trace: {}\n", e.what());
    return 1;
  }
  return 0;
}
