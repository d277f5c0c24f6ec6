// Replays a real GPU's trace (measure --trace) through the energy accounting, offline: how consistent the
// per-phase figures are (per-iteration CV, on-phase power) and how they move when the counter is read
// sparsely. A trace taken with dense counter reads (--counter-interval 10) can be thinned to what the
// phase-locked schedule would have read, so one GPU run answers "what would the default have said" for
// every candidate schedule (docs/evidence/sampler-replay.txt; its limits: docs/evidence/sampler-h100.md).
//
//   bench_replay_trace TRACE.csv PHASES.csv [--gpu N] [--keep-every-posting K] [--phase NAME]...
//
// --keep-every-posting K: keep only the first read after every K-th counter posting (K = 1: one read per
// posting; the default schedule reads after every 5th). Without it every read is kept.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "analysis/runs_csv.hpp"
#include "sampling/counter_schedule.hpp"
#include "sampling/energy_accounting.hpp"

namespace ww = wattwise;
using ww::Nanos;
using ww::sampling::CounterReading;
using ww::sampling::GpuTrace;
using ww::sampling::PowerReading;

namespace {

// A counter read's duration, when the trace does not carry it (traces before energy_read_ms): what one
// read costs on an H100 (shared/reference/nvml-h100.md).
constexpr double kAssumedReadMs = 4.0;

GpuTrace read_trace(const std::string& path, unsigned gpu) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  GpuTrace trace;
  trace.gpu_index = gpu;
  std::map<std::string, std::size_t> column;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto cells = ww::analysis::split_csv_line(line);
    if (column.empty()) {
      for (std::size_t i = 0; i < cells.size(); ++i) column[cells[i]] = i;
      continue;
    }
    auto cell = [&](const char* name) -> const std::string* {
      const auto it = column.find(name);
      if (it == column.end() || it->second >= cells.size() || cells[it->second].empty()) return nullptr;
      return &cells[it->second];
    };
    if (const auto* g = cell("gpu"); g == nullptr || std::stoul(*g) != gpu) continue;
    const Nanos t = ww::from_seconds(std::stod(cells[0]));
    if (const auto* e = cell("energy_mj")) {
      const auto* cost = cell("energy_read_ms");
      const double ms = cost != nullptr ? std::stod(*cost) : kAssumedReadMs;
      trace.energy.push_back(CounterReading{t, ww::from_seconds(ms / 1000), std::stoull(*e)});
    }
    if (const auto* p = cell("power_inst_w")) trace.power_instant.push_back(PowerReading{t, std::stod(*p)});
    if (const auto* p = cell("power_avg_w")) trace.power_average.push_back(PowerReading{t, std::stod(*p)});
    if (const auto* p = cell("power_sample_w")) trace.power_samples.push_back(PowerReading{t, std::stod(*p)});
  }
  return trace;
}

struct Phase {
  std::string name;
  Nanos begin{0};
  Nanos end{0};
  double energy_j = 0;  // what the measurement itself said
};

std::vector<Phase> read_phases(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<Phase> phases;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    const auto cells = ww::analysis::split_csv_line(line);
    if (cells.size() < 5) continue;
    phases.push_back(Phase{cells[0], ww::from_seconds(std::stod(cells[1])), ww::from_seconds(std::stod(cells[2])),
                           cells[4].empty() ? 0.0 : std::stod(cells[4])});
  }
  return phases;
}

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

struct Stats {
  std::size_t n = 0;
  double mean = 0;
  double cv_pct = 0;
};

Stats stats(const std::vector<double>& values) {
  Stats s;
  s.n = values.size();
  if (s.n < 2) return s;
  double sum = 0, sq = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.n);
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
  app.add_option("trace", trace_path)->required();
  app.add_option("phases", phases_path)->required();
  app.add_option("--gpu", gpu);
  app.add_option("--keep-every-posting", every);
  app.add_option("--schedule", schedule, "emulate the phase-locked schedule reading every N postings");
  app.add_option("--phase", names);
  CLI11_PARSE(app, argc, argv);
  try {
    GpuTrace trace = read_trace(trace_path, gpu);
    const std::size_t all_reads = trace.energy.size();
    if (every > 0) trace.energy = keep_every_posting(trace.energy, every);
    if (schedule > 0) trace.energy = as_scheduled(trace.energy, schedule);
    const ww::sampling::EnergyAccounting accounting(trace);
    const auto alignment = accounting.alignment();
    fmt::print("counter reads {} of {}; samples {}; alignment offset {:.1f} ms, scale {:.4f}, {} intervals\n",
               trace.energy.size(), all_reads, trace.power_samples.size(),
               alignment ? ww::to_seconds(alignment->offset) * 1000 : 0.0, alignment ? alignment->scale : 0.0,
               alignment ? alignment->intervals : 0);
    if (names.empty()) names = {"iteration"};
    const auto phases = read_phases(phases_path);
    fmt::print("{:<12} {:>5} {:>10} {:>8} {:>10} {:>8} {:>10} {:>8}\n", "phase", "n", "energy J", "CV %",
               "measured J", "CV %", "power W", "CV %");
    for (const auto& name : names) {
      std::vector<double> replayed, measured, power;
      for (const auto& p : phases) {
        if (p.name != name) continue;
        const auto e = accounting.energy(p.begin, p.end);
        if (!e.joules) continue;
        replayed.push_back(*e.joules);
        measured.push_back(p.energy_j);
        power.push_back(*e.joules / ww::to_seconds(p.end - p.begin));
      }
      const Stats r = stats(replayed), m = stats(measured), w = stats(power);
      fmt::print("{:<12} {:>5} {:>10.3f} {:>8.2f} {:>10.3f} {:>8.2f} {:>10.2f} {:>8.2f}\n", name, r.n, r.mean,
                 r.cv_pct, m.mean, m.cv_pct, w.mean, w.cv_pct);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_replay_trace: {}\n", e.what());
    return 1;
  }
  return 0;
}
