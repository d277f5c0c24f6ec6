// Memory of a month-long job that marks every iteration, and its per-phase figures against the unbounded
// computation (docs/evidence/phase-folding.md). A plain program: what it measures is memory and agreement.
//
//   build/bench/bench_long_job --days 30 --gpus 8                 # the bounded job: peak RSS
//   build/bench/bench_long_job --hours 6 --gpus 8 --compare       # bounded and unbounded, per-phase figures
//   build/bench/bench_long_job --hours 6 --gpus 8 --compare --same-alignment   # the bookkeeping alone
//   build/bench/bench_long_job --hours 1 --gpus 2 --compare --stretch-offsets   # why the offsets differ
//
// The job (tests/measure/long_job.hpp) runs in virtual time on simulated GPUs whose counter, samples,
// instantaneous power and telemetry are read by the real sampler at its default cadences, each rank
// marking 10 iterations a second, folded as `measure` folds them (measure/phase_folding.hpp).
#include <sys/resource.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <cmath>
#include <string>

#include "../tests/measure/long_job.hpp"
#include "sampling/alignment.hpp"
#include "sampling/counter_timeline.hpp"
#include "sampling/energy_accounting.hpp"
#include "sampling/power_curve.hpp"

namespace {

using namespace wattwise;
using namespace std::chrono_literals;

double relative(double a, double b) {
  return b == 0 ? std::fabs(a) : std::fabs(a - b) / std::fabs(b);
}

void print_job(const char* label, const measure::testing::LongJobResult& r, double wall_s) {
  const auto& m = r.m;
  fmt::print("{}: {:.1f} s of CPU-bound wall time, peak RSS {:.0f} MiB at the job's end; markers heard {}, held "
             "at the end {}; readings kept at the end {} (max held markers while running {})\n",
             label, wall_s, r.max_rss_mib, m.received_markers(), m.markers.size(),
             r.kept_readings.empty() ? 0 : r.kept_readings.back(),
             r.pending_markers.empty() ? 0 : *std::max_element(r.pending_markers.begin(), r.pending_markers.end()));
  fmt::print("  {:10} count {:>10}  energy {:>16.3f} J  mean {:>10.4f} J  cv {:>8.5f}  (the simulated GPUs' own)\n",
             "truth", r.true_iteration_j.count(), r.true_iteration_j.mean().value_or(0) * r.true_iteration_j.count(),
             r.true_iteration_j.mean().value_or(-1), r.true_iteration_j.cv().value_or(-1));
  for (const auto& s : m.phase_summaries) {
    fmt::print("  {:10} count {:>10}  energy {:>16.3f} J  mean {:>10.4f} J  cv {:>8.5f}  time {:>12.3f} s\n", s.name,
               s.count, s.energy_j.value_or(-1), s.energy_per_occurrence.mean().value_or(-1),
               s.energy_per_occurrence.cv().value_or(-1), s.time_s);
  }
  for (const auto& g : m.gpu_energy)
    fmt::print("  GPU {} energy {:.1f} J, peak {:.1f} W\n", g.gpu.index, g.energy_j.value_or(-1),
               g.peak_power_w.value_or(-1));
}

// Mean distance of a timeline's knots from the simulated postings (kLongJobPostingPhase + n * kLongJobPosting).
double knots_from_postings_ms(const sampling::CounterTimeline& timeline) {
  double sum = 0;
  for (const auto& piece : timeline.pieces) {
    const double ms = to_seconds(piece.end - measure::testing::kLongJobPostingPhase) * 1e3;
    const double period_ms = to_seconds(measure::testing::kLongJobPosting) * 1e3;
    sum += ms - period_ms * std::round(ms / period_ms);
  }
  return timeline.pieces.empty() ? 0.0 : sum / static_cast<double>(timeline.pieces.size());
}

// The samples' offset of one GPU's whole trace, against the one found the folding's way (phase_folding.cpp:
// the least squares summed over minute stretches, each with 90 s of samples), the stretches' knots placed
// on each stretch's own posting grid (as before 27 Nov) and on the grid learnt from every read so far (as
// the folding does now, sampling::PostingGridLearner); and where the knots lie against the simulated
// postings.
void print_stretch_offsets(const sampling::GpuTrace& trace, Nanos duration) {
  const auto cut = [](const auto& readings, Nanos from, Nanos to) {
    std::decay_t<decltype(readings)> kept;
    for (const auto& r : readings)
      if (r.t >= from && r.t < to) kept.push_back(r);
    return kept;
  };
  const sampling::CounterTimeline whole = sampling::build_counter_timeline(trace.energy);
  const auto whole_alignment = sampling::EnergyAccounting(trace).alignment();
  if (!whole_alignment) return;
  struct Way {
    const char* label;
    bool learnt;
    sampling::AlignmentSums sums;
    Nanos summed_until = Nanos::min();
    double knots_ms = 0;
    std::size_t stretches = 0;
  };
  std::vector<Way> ways;
  for (const bool learnt : {false, true})
    ways.push_back({learnt ? "the grid learnt so far" : "its own grid", learnt,
                    sampling::AlignmentSums(whole_alignment->offset - 20ms, 250us, 161)});
  sampling::PostingGridLearner learner;
  for (Nanos end = 90s; end <= duration; end += 60s) {
    const auto reads = cut(trace.energy, Nanos::min(), end - 500ms);
    learner.add(sampling::posting_brackets(cut(reads, end - 90s, end)));
    const sampling::PowerCurve fine(cut(trace.power_samples, end - 90s, end), sampling::PowerInterpolation::kIntervalMean);
    for (Way& way : ways) {
      const sampling::CounterTimeline stretch = sampling::build_counter_timeline(
          cut(reads, end - 89500ms, end), way.learnt ? learner.grid() : std::nullopt);
      way.summed_until = way.sums.add(stretch, fine, way.summed_until);
      way.knots_ms += knots_from_postings_ms(stretch);
      ++way.stretches;
    }
  }
  fmt::print("  GPU {}: whole trace: samples' offset {:.2f} ms, knots {:+.2f} ms from the postings\n", trace.gpu_index,
             to_seconds(whole_alignment->offset) * 1e3, knots_from_postings_ms(whole));
  for (const Way& way : ways)
    fmt::print("         minute stretches, {:22}: samples' offset {:.2f} ms, knots {:+.2f} ms from the postings\n",
               way.label, to_seconds(way.sums.best().value_or(Nanos{0})) * 1e3,
               way.knots_ms / static_cast<double>(std::max<std::size_t>(way.stretches, 1)));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("memory and per-phase figures of a long job marking every iteration");
  double days = 0, hours = 0;
  std::size_t gpus = 8;
  double rate = 10;
  bool compare = false, same_alignment = false, stretch_offsets = false;
  int fast_ms = 20, telemetry_ms = 100;
  app.add_option("--days", days, "simulated days");
  app.add_option("--hours", hours, "simulated hours (added to --days)");
  app.add_option("--gpus", gpus, "GPUs, one rank each");
  app.add_option("--iterations-per-s", rate, "iterations each rank marks a second");
  app.add_option("--fast-ms", fast_ms, "the sampler's instantaneous-power period (default 20, as measure)");
  app.add_option("--telemetry-ms", telemetry_ms, "the sampler's telemetry period (default 100, as measure)");
  app.add_flag("--compare", compare, "also run the job unbounded and compare the per-phase figures");
  app.add_flag("--same-alignment", same_alignment,
               "with --compare: run the unbounded job first and fold with its samples' offsets to the counter "
               "(the folding's bookkeeping alone compared)");
  app.add_flag("--stretch-offsets", stretch_offsets,
               "with --compare: each GPU's samples' offset from the unbounded job's whole trace and from its minute "
               "stretches, as the folding finds it");
  CLI11_PARSE(app, argc, argv);

  measure::testing::LongJobConfig config;
  config.gpus = gpus;
  config.iterations_per_s = rate;
  config.fast_period = std::chrono::milliseconds(fast_ms);
  config.telemetry_period = std::chrono::milliseconds(telemetry_ms);
  config.duration = std::chrono::duration_cast<Nanos>(std::chrono::duration<double>((days * 24 + hours) * 3600));
  fmt::print("job: {:g} h on {} GPUs, {:g} iterations a second per rank, an epoch every {} h; sampler: instant "
             "power every {} ms, telemetry every {} ms, counter and 20 ms samples as measure reads them\n",
             to_seconds(config.duration) / 3600, gpus, rate, config.epoch / 1h, fast_ms, telemetry_ms);
  const auto timed = [&](const char* label, const measure::testing::LongJobConfig& c) {
    const auto start = std::chrono::steady_clock::now();
    auto result = measure::testing::run_long_job(c);
    print_job(label, result, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return result;
  };
  std::optional<measure::testing::LongJobResult> whole;
  auto unbounded_config = config;
  unbounded_config.fold = false;
  if (compare && same_alignment) {
    whole = timed("unbounded", unbounded_config);
    for (const auto& trace : whole->m.traces)
      config.folding.known_offsets.push_back(sampling::EnergyAccounting(trace).alignment()->offset);
  }
  const auto bounded = timed(same_alignment ? "bounded, the unbounded job's offsets" : "bounded", config);
  if (!compare) return 0;
  if (!whole) whole = timed("unbounded", unbounded_config);
  if (stretch_offsets)
    for (const auto& trace : whole->m.traces) print_stretch_offsets(trace, config.duration);
  double worst = 0;
  for (const auto& w : whole->m.phase_summaries) {
    for (const auto& b : bounded.m.phase_summaries) {
      if (b.name != w.name) continue;
      const double de = relative(b.energy_j.value_or(0), w.energy_j.value_or(0));
      const double dm = relative(b.energy_per_occurrence.mean().value_or(0), w.energy_per_occurrence.mean().value_or(0));
      const double dc = relative(b.energy_per_occurrence.cv().value_or(0), w.energy_per_occurrence.cv().value_or(0));
      const double dt = relative(b.time_s, w.time_s);
      fmt::print("  {:10} count {} vs {}; relative difference: energy {:.2e}, mean {:.2e}, cv {:.2e}, time {:.2e}\n",
                 w.name, b.count, w.count, de, dm, dc, dt);
      worst = std::max({worst, de, dm, dc, dt, b.count == w.count ? 0.0 : 1.0});
    }
  }
  fmt::print("worst relative difference of a per-phase figure: {:.2e} ({})\n", worst,
             worst <= 1e-3 ? "within 0.1%" : "NOT within 0.1%");
  return worst <= 1e-3 ? 0 : 1;
}
