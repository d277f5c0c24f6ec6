#include "report/trace_replay.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "analysis/runs_csv.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "report/trace_csv.hpp"

namespace wattwise::report {

namespace {

// A counter read's duration where the trace does not carry it (traces before energy_read_ms): what one read
// costs on an H100 (shared/reference/nvml-h100.md).
constexpr double kAssumedReadMs = 4.0;

std::ifstream open(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw environment_error("cannot read " + path + ": check the path and its permissions");
  return in;
}

double number(const std::string& text, const std::string& path, std::size_t line) {
  if (const auto value = parse_number(text)) return *value;
  throw data_error(fmt::format("{}:{}: '{}' is not a number", path, line, text));
}

// "# sample_gap gpu=G after_s=A before_s=B" (write_trace_csv): the GPU and the gap, A < B.
std::pair<unsigned, sampling::SampleGap> sample_gap(const std::string& line, const std::string& path,
                                                    std::size_t number_of_line) {
  std::map<std::string, double> fields;
  bool repeated = false;  // "gpu=0 gpu=1": which one was meant cannot be told
  std::istringstream words(line.substr(std::string(kSampleGapLine).size()));
  for (std::string word; words >> word;) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) break;
    repeated |= !fields.emplace(word.substr(0, eq), number(word.substr(eq + 1), path, number_of_line)).second;
  }
  // Seconds since the job started; past ~292 years they do not fit the nanosecond time line (the conversion
  // would be undefined), and no trace is a thousandth of that long.
  constexpr double kLongestS = 1e9;
  const auto gpu = fields.find("gpu"), after = fields.find("after_s"), before = fields.find("before_s");
  if (repeated || gpu == fields.end() || after == fields.end() || before == fields.end() || !(gpu->second >= 0) ||
      gpu->second > 1e6 || gpu->second != std::floor(gpu->second) || !(after->second < before->second) ||
      std::abs(after->second) > kLongestS || std::abs(before->second) > kLongestS)
    throw data_error(fmt::format("{}:{}: a sample_gap line needs gpu=N after_s=A before_s=B with A < B, each "
                                 "once, within {:g} s",
                                 path, number_of_line, kLongestS));
  return {static_cast<unsigned>(gpu->second),
          sampling::SampleGap{from_seconds(after->second), from_seconds(before->second)}};
}

struct TraceFile {
  std::map<unsigned, sampling::GpuTrace> gpus;
  std::optional<double> job_start_s, job_end_s;
  double first_s = 0, last_s = 0;
};

TraceFile read_trace_file(const std::string& path, std::optional<unsigned> only_gpu) {
  std::ifstream in = open(path);
  TraceFile file;
  std::map<std::string, std::size_t> column;
  std::string line;
  bool any = false;
  std::map<unsigned, std::size_t> first_gap_line;  // per GPU, for a gap of a GPU with no rows
  for (std::size_t number_of_line = 1; std::getline(in, line); ++number_of_line) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      for (auto [key, target] : {std::pair{"# job_start_s=", &file.job_start_s}, {"# job_end_s=", &file.job_end_s}})
        if (line.rfind(key, 0) == 0) *target = number(line.substr(std::string(key).size()), path, number_of_line);
      if (line.rfind(kSampleGapLine, 0) == 0) {
        const auto [gpu, gap] = sample_gap(line, path, number_of_line);
        if (!only_gpu || gpu == *only_gpu) {
          file.gpus[gpu].gpu_index = gpu;
          file.gpus[gpu].sample_gaps.push_back(gap);
          first_gap_line.emplace(gpu, number_of_line);
        }
      }
      continue;
    }
    const auto cells = analysis::split_csv_line(line);
    if (column.empty()) {
      for (std::size_t i = 0; i < cells.size(); ++i) column[cells[i]] = i;
      if (!column.count("time_s") || !column.count("gpu"))
        throw data_error(path + ": not a wattwise trace (no time_s and gpu columns)");
      continue;
    }
    auto cell = [&](const char* name) -> const std::string* {
      const auto it = column.find(name);
      if (it == column.end() || it->second >= cells.size() || cells[it->second].empty()) return nullptr;
      return &cells[it->second];
    };
    const auto* g = cell("gpu");
    const auto* time = cell("time_s");
    if (g == nullptr || time == nullptr) throw data_error(fmt::format("{}:{}: no time or gpu", path, number_of_line));
    const auto gpu = static_cast<unsigned>(number(*g, path, number_of_line));
    if (only_gpu && gpu != *only_gpu) continue;
    const double t_s = number(*time, path, number_of_line);
    file.first_s = any ? std::min(file.first_s, t_s) : t_s;
    file.last_s = any ? std::max(file.last_s, t_s) : t_s;
    any = true;
    sampling::GpuTrace& trace = file.gpus[gpu];
    trace.gpu_index = gpu;
    const Nanos t = from_seconds(t_s);
    if (const auto* e = cell("energy_mj")) {
      const auto* cost = cell("energy_read_ms");
      const double ms = cost != nullptr ? number(*cost, path, number_of_line) : kAssumedReadMs;
      trace.energy.push_back(
          sampling::CounterReading{t, from_seconds(ms / 1000), static_cast<std::uint64_t>(number(*e, path, number_of_line))});
    }
    if (const auto* p = cell("power_inst_w")) trace.power_instant.push_back({t, number(*p, path, number_of_line)});
    if (const auto* p = cell("power_avg_w")) trace.power_average.push_back({t, number(*p, path, number_of_line)});
    if (const auto* p = cell("power_sample_w")) trace.power_samples.push_back({t, number(*p, path, number_of_line)});
  }
  // A gap is in a GPU's samples, so its GPU has rows: a gap line alone would make the replay account a GPU
  // the run never read (an empty trace beside the real ones, counted among the job's GPUs).
  for (const auto& [gpu, trace] : file.gpus)
    if (trace.energy.empty() && trace.power_instant.empty() && trace.power_average.empty() &&
        trace.power_samples.empty())
      throw data_error(fmt::format("{}:{}: a sample_gap for GPU {}, which has no rows in the file", path,
                                   first_gap_line.at(gpu), gpu));
  // Drained samples arrive in batches that may overlap the previous one by a reading: in time order.
  for (auto& [gpu, trace] : file.gpus) {
    auto by_time = [](const sampling::PowerReading& a, const sampling::PowerReading& b) { return a.t < b.t; };
    std::stable_sort(trace.power_samples.begin(), trace.power_samples.end(), by_time);
    // Gaps that overlap are one, as the accounting reads them (the sampler never writes such lines; a file
    // put together by hand or from two runs may hold them): the trace read says so, its gaps counted once.
    trace.sample_gaps = sampling::disjoint_sample_gaps(std::move(trace.sample_gaps));
  }
  return file;
}

}  // namespace

sampling::GpuTrace read_gpu_trace_csv(const std::string& trace_csv, unsigned gpu) {
  TraceFile file = read_trace_file(trace_csv, gpu);
  if (!file.gpus.empty()) return std::move(file.gpus.begin()->second);
  sampling::GpuTrace empty;
  empty.gpu_index = gpu;
  return empty;
}

ReplayedRun read_replayed_run(const std::string& trace_csv, const std::string& phases_csv,
                              const ReplayOptions& options) {
  TraceFile file = read_trace_file(trace_csv, std::nullopt);
  ReplayedRun run;
  measure::Measurement& m = run.measurement;
  m.backend = "replay";
  m.job_start = from_seconds(file.job_start_s.value_or(file.first_s));
  m.job_end = from_seconds(file.job_end_s.value_or(file.last_s));
  for (auto& [gpu, trace] : file.gpus) {
    hw::GpuIdentity identity;
    identity.index = gpu;
    m.gpus.push_back(identity);
    m.traces.push_back(std::move(trace));
    measure::GpuEnergy energy;
    energy.gpu = identity;
    energy.used_by_job = options.job_gpus == 0 || m.gpu_energy.size() < options.job_gpus;
    energy.power_limit_max_w = options.power_limit_max_w;
    m.gpu_energy.push_back(energy);
  }

  std::ifstream in = open(phases_csv);
  std::map<std::string, std::size_t> column;
  std::string line;
  for (std::size_t number_of_line = 1; std::getline(in, line); ++number_of_line) {
    if (line.empty() || line[0] == '#') continue;
    const auto cells = analysis::split_csv_line(line);
    if (column.empty()) {
      for (std::size_t i = 0; i < cells.size(); ++i) column[cells[i]] = i;
      for (const char* needed : {"name", "begin_s", "end_s"})
        if (!column.count(needed)) throw data_error(phases_csv + ": not a wattwise phases file (no " + needed + ")");
      continue;
    }
    auto cell = [&](const char* name) -> const std::string* {
      const auto it = column.find(name);
      if (it == column.end() || it->second >= cells.size() || cells[it->second].empty()) return nullptr;
      return &cells[it->second];
    };
    workload::Phase phase;
    phase.name = cell("name") != nullptr ? *cell("name") : "";
    if (cell("begin_s") == nullptr || cell("end_s") == nullptr)
      throw data_error(fmt::format("{}:{}: a phase without begin_s or end_s", phases_csv, number_of_line));
    phase.begin = from_seconds(number(*cell("begin_s"), phases_csv, number_of_line));
    phase.end = from_seconds(number(*cell("end_s"), phases_csv, number_of_line));
    if (const auto* rank = cell("rank")) phase.rank = static_cast<int>(number(*rank, phases_csv, number_of_line));
    if (const auto* depth = cell("same_name_depth"))
      phase.same_name_depth = static_cast<int>(number(*depth, phases_csv, number_of_line));
    const auto* energy = cell("energy_j");
    run.measured_phase_j.push_back(energy != nullptr ? std::optional(number(*energy, phases_csv, number_of_line))
                                                     : std::nullopt);
    m.phases.push_back(std::move(phase));
  }
  return run;
}

}  // namespace wattwise::report
