#include "report/html/trace_reader.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "analysis/runs_csv.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/text.hpp"

namespace wattwise::report::html {

namespace {

// Lines that are neither comments nor blank, split into fields, with the header's column positions.
struct CsvTable {
  std::map<std::string, std::string> settings;  // from comment lines "# key=value" (job_start_s, job_end_s)
  std::map<std::string, std::size_t> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> line_numbers;
};

CsvTable read_csv(std::istream& in, const std::string& source_name) {
  CsvTable table;
  std::string line;
  bool header_seen = false;
  std::vector<std::string> header;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    make_valid_utf8(line);  // phase names may be any bytes; the report's JSON and HTML need UTF-8
    if (!line.empty() && line[0] == '#') {
      const auto equals = line.find('=');
      const auto key_begin = line.find_first_not_of("# ");
      if (equals != std::string::npos && key_begin < equals && line.find(' ', key_begin) > equals)
        table.settings.emplace(line.substr(key_begin, equals - key_begin), line.substr(equals + 1));
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> fields;
    try {
      fields = analysis::split_csv_line(line);
    } catch (const std::invalid_argument&) {
      throw data_error(fmt::format("{}:{}: unclosed quote; is this a wattwise CSV?", source_name, number));
    }
    if (!header_seen) {
      for (std::size_t i = 0; i < fields.size(); ++i) table.columns[fields[i]] = i;
      header = fields;
      header_seen = true;
      continue;
    }
    if (fields == header) continue;  // the header again: several files concatenated (one per GPU)
    table.rows.push_back(std::move(fields));
    table.line_numbers.push_back(number);
  }
  return table;
}

std::size_t require_column(const CsvTable& table, const std::string& name, const std::string& source_name) {
  const auto it = table.columns.find(name);
  if (it == table.columns.end())
    throw data_error(
        fmt::format("{}: no '{}' column; is this a wattwise trace or phases CSV?", source_name, name));
  return it->second;
}

std::optional<double> number_at(const CsvTable& table, std::size_t row, std::optional<std::size_t> column,
                                const std::string& source_name) {
  if (!column) return std::nullopt;
  const auto& fields = table.rows[row];
  if (*column >= fields.size() || fields[*column].empty()) return std::nullopt;
  if (const auto value = parse_number(fields[*column])) return value;
  // for_terminal: the message is printed, and the field is anybody's bytes.
  throw data_error(fmt::format("{}:{}: '{}' is not a finite number", source_name, table.line_numbers[row],
                               for_terminal(fields[*column])));
}

std::optional<std::size_t> optional_column(const CsvTable& table, const std::string& name) {
  const auto it = table.columns.find(name);
  if (it == table.columns.end()) return std::nullopt;
  return it->second;
}

std::optional<double> setting_seconds(const CsvTable& table, const std::string& key,
                                      const std::string& source_name) {
  const auto it = table.settings.find(key);
  if (it == table.settings.end()) return std::nullopt;
  if (const auto value = parse_number(it->second)) return value;
  throw data_error(
      fmt::format("{}: '# {}={}' is not a number of seconds", source_name, key, for_terminal(it->second)));
}

double value_at(const analysis::TimeSeries& s, std::size_t i, double t) {
  // Linear between points i-1 and i, which enclose t.
  const double t0 = s.time_s[i - 1], t1 = s.time_s[i];
  return s.value[i - 1] + (s.value[i] - s.value[i - 1]) * (t - t0) / (t1 - t0);
}

// The GPUs' powers summed where every GPU has data, at every instant any GPU has a reading (each GPU
// linear between its own): a uniform grid as coarse as one GPU's samples would smear the steps of a
// sparse trace (a simulated one has a reading per change) into ramps. Past 20000 instants, a uniform grid.
analysis::TimeSeries sum_on_common_grid(const std::vector<analysis::TimeSeries>& per_gpu) {
  double begin = per_gpu.front().time_s.front(), end = per_gpu.front().time_s.back();
  for (const auto& s : per_gpu) {
    begin = std::max(begin, s.time_s.front());
    end = std::min(end, s.time_s.back());
  }
  analysis::TimeSeries total;
  if (!(end > begin)) return total;
  constexpr std::size_t kMaxPoints = 20000;
  for (const auto& s : per_gpu)
    for (double t : s.time_s)
      if (t >= begin && t <= end) total.time_s.push_back(t);
  std::sort(total.time_s.begin(), total.time_s.end());
  total.time_s.erase(std::unique(total.time_s.begin(), total.time_s.end()), total.time_s.end());
  if (total.time_s.size() > kMaxPoints || total.time_s.size() < 2) {
    total.time_s.clear();
    for (std::size_t i = 0; i < kMaxPoints; ++i)
      total.time_s.push_back(begin +
                             (end - begin) * static_cast<double>(i) / static_cast<double>(kMaxPoints - 1));
  }
  total.value.assign(total.time_s.size(), 0.0);
  for (const auto& s : per_gpu) {
    const auto resampled = analysis::resample_linear(s, total.time_s);
    for (std::size_t i = 0; i < total.time_s.size(); ++i)
      total.value[i] += resampled[i].value_or(0);  // inside every range
  }
  return total;
}

}  // namespace

analysis::TimeSeries clip_to_window(const analysis::TimeSeries& s, double begin_s, double end_s) {
  analysis::TimeSeries out;
  if (s.time_s.empty() || !(end_s > begin_s)) return out;
  auto add = [&](double t, double v) {
    out.time_s.push_back(t);
    out.value.push_back(v);
  };
  for (std::size_t i = 0; i < s.time_s.size(); ++i) {
    const double t = s.time_s[i];
    if (i > 0 && s.time_s[i - 1] < begin_s && t > begin_s) add(begin_s, value_at(s, i, begin_s));
    if (i > 0 && s.time_s[i - 1] < end_s && t > end_s) {
      add(end_s, value_at(s, i, end_s));
      break;
    }
    if (t >= begin_s && t <= end_s) add(t, s.value[i]);
  }
  return out;
}

PowerTrace read_power_trace(std::istream& in, const std::string& source_name) {
  const CsvTable table = read_csv(in, source_name);
  PowerTrace trace;
  trace.job_start_s = setting_seconds(table, "job_start_s", source_name);
  trace.job_end_s = setting_seconds(table, "job_end_s", source_name);
  const std::size_t time_col = require_column(table, "time_s", source_name);
  const auto gpu_col = optional_column(table, "gpu");
  const auto sample_col = optional_column(table, "power_sample_w");
  const auto instant_col = optional_column(table, "power_inst_w");

  std::map<long, analysis::TimeSeries> samples, instant;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto t = number_at(table, r, time_col, source_name);
    if (!t) continue;
    const double gpu_number = number_at(table, r, gpu_col, source_name).value_or(0);
    if (gpu_number < 0 || gpu_number > 1e6 || gpu_number != std::floor(gpu_number))
      throw data_error(
          fmt::format("{}:{}: GPU '{}' is not a GPU index", source_name, table.line_numbers[r], gpu_number));
    const long gpu = static_cast<long>(gpu_number);
    if (const auto p = number_at(table, r, sample_col, source_name)) {
      samples[gpu].time_s.push_back(*t);
      samples[gpu].value.push_back(*p);
    }
    if (const auto p = number_at(table, r, instant_col, source_name)) {
      instant[gpu].time_s.push_back(*t);
      instant[gpu].value.push_back(*p);
    }
  }
  std::vector<analysis::TimeSeries> per_gpu;
  std::vector<unsigned> gpu_numbers;
  std::map<long, bool> gpus;
  for (const auto& [gpu, s] : samples) gpus[gpu] = true;
  for (const auto& [gpu, s] : instant) gpus[gpu] = true;
  for (const auto& [gpu, unused] : gpus) {
    auto& s = samples[gpu].time_s.size() >= 2 ? samples[gpu] : instant[gpu];
    if (s.time_s.size() < 2) continue;
    // The CSV is sorted by time already; keep it so, dropping repeated instants.
    analysis::TimeSeries clean;
    for (std::size_t i = 0; i < s.time_s.size(); ++i) {
      if (!clean.time_s.empty() && s.time_s[i] <= clean.time_s.back()) continue;
      clean.time_s.push_back(s.time_s[i]);
      clean.value.push_back(s.value[i]);
    }
    per_gpu.push_back(std::move(clean));
    gpu_numbers.push_back(static_cast<unsigned>(gpu));
  }
  if (per_gpu.empty())
    throw data_error(
        fmt::format("{}: no power readings (power_sample_w or power_inst_w); nothing to draw", source_name));
  trace.power_w = per_gpu.size() == 1 ? per_gpu.front() : sum_on_common_grid(per_gpu);
  for (std::size_t i = 0; i < per_gpu.size(); ++i) trace.per_gpu_w.push_back({gpu_numbers[i], per_gpu[i]});
  // The sampler runs on past the job's end (the energy counter lags ~100 ms); the job's own figures stop
  // where the job did, as `wattwise measure` cuts them.
  if (trace.job_start_s && trace.job_end_s) {
    if (!(*trace.job_end_s >= *trace.job_start_s))
      throw data_error(fmt::format("{}: job_end_s {} is before job_start_s {}", source_name, *trace.job_end_s,
                                   *trace.job_start_s));
    auto clipped = clip_to_window(trace.power_w, *trace.job_start_s, *trace.job_end_s);
    if (clipped.time_s.size() >= 2) trace.power_w = std::move(clipped);
    for (auto& gpu : trace.per_gpu_w)
      if (auto cut = clip_to_window(gpu.power_w, *trace.job_start_s, *trace.job_end_s);
          cut.time_s.size() >= 2)
        gpu.power_w = std::move(cut);
  }
  return trace;
}

analysis::TimeSeries read_power_trace_csv(std::istream& in, const std::string& source_name) {
  return read_power_trace(in, source_name).power_w;
}

PhasesCsv read_phases_csv_with_spans(std::istream& in, const std::string& source_name) {
  const CsvTable table = read_csv(in, source_name);
  const std::size_t name_col = require_column(table, "name", source_name);
  const std::size_t begin_col = require_column(table, "begin_s", source_name);
  const std::size_t end_col = require_column(table, "end_s", source_name);
  const auto energy_col = optional_column(table, "energy_j");
  const auto depth_col = optional_column(table, "same_name_depth");
  PhasesCsv phases;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    // A phase inside one of the same name is inside its time already: totals count the outermost only.
    if (number_at(table, r, depth_col, source_name).value_or(0) > 0) continue;
    const auto begin = number_at(table, r, begin_col, source_name);
    const auto end = number_at(table, r, end_col, source_name);
    if (!begin || !end || name_col >= table.rows[r].size())
      throw data_error(
          fmt::format("{}:{}: a phase needs name, begin_s and end_s", source_name, table.line_numbers[r]));
    phases.totals.push_back(
        {table.rows[r][name_col], *end - *begin, number_at(table, r, energy_col, source_name)});
    phases.spans.push_back({table.rows[r][name_col], *begin, *end});
  }
  return phases;
}

std::vector<PhaseTotal> read_phases_csv(std::istream& in, const std::string& source_name) {
  return read_phases_csv_with_spans(in, source_name).totals;
}

}  // namespace wattwise::report::html
