#include "report/html/trace_reader.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "analysis/runs_csv.hpp"
#include "core/error.hpp"

namespace wattwise::report::html {

namespace {

// Lines that are neither comments nor blank, split into fields, with the header's column positions.
struct CsvTable {
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
    if (line.empty() || line[0] == '#') continue;
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
  try {
    return std::stod(fields[*column]);
  } catch (const std::exception&) {
    throw data_error(
        fmt::format("{}:{}: '{}' is not a number", source_name, table.line_numbers[row], fields[*column]));
  }
}

std::optional<std::size_t> optional_column(const CsvTable& table, const std::string& name) {
  const auto it = table.columns.find(name);
  if (it == table.columns.end()) return std::nullopt;
  return it->second;
}

analysis::TimeSeries sum_on_common_grid(const std::vector<analysis::TimeSeries>& per_gpu) {
  double begin = per_gpu.front().time_s.front(), end = per_gpu.front().time_s.back();
  std::size_t most_samples = 0;
  for (const auto& s : per_gpu) {
    begin = std::max(begin, s.time_s.front());
    end = std::min(end, s.time_s.back());
    most_samples = std::max(most_samples, s.time_s.size());
  }
  analysis::TimeSeries total;
  if (!(end > begin)) return total;
  const std::size_t points = std::clamp<std::size_t>(most_samples, 2, 20000);
  for (std::size_t i = 0; i < points; ++i)
    total.time_s.push_back(begin + (end - begin) * static_cast<double>(i) / static_cast<double>(points - 1));
  total.value.assign(points, 0.0);
  for (const auto& s : per_gpu) {
    const auto resampled = analysis::resample_linear(s, total.time_s);
    for (std::size_t i = 0; i < points; ++i)
      total.value[i] += resampled[i].value_or(0);  // inside every range
  }
  return total;
}

}  // namespace

analysis::TimeSeries read_power_trace_csv(std::istream& in, const std::string& source_name) {
  const CsvTable table = read_csv(in, source_name);
  const std::size_t time_col = require_column(table, "time_s", source_name);
  const auto gpu_col = optional_column(table, "gpu");
  const auto sample_col = optional_column(table, "power_sample_w");
  const auto instant_col = optional_column(table, "power_inst_w");

  std::map<long, analysis::TimeSeries> samples, instant;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto t = number_at(table, r, time_col, source_name);
    if (!t) continue;
    const double gpu_number = number_at(table, r, gpu_col, source_name).value_or(0);
    // A GPU index is a small whole number; a cast of 3e19 to long is undefined behaviour (found by
    // fuzz_trace_csv).
    if (!(gpu_number >= 0 && gpu_number <= 1e6 && gpu_number == std::floor(gpu_number)))
      throw data_error(
          fmt::format("{}: row {}: gpu must be a GPU index (a whole number >= 0)", source_name, r + 1));
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
  }
  if (per_gpu.empty())
    throw data_error(
        fmt::format("{}: no power readings (power_sample_w or power_inst_w); nothing to draw", source_name));
  if (per_gpu.size() == 1) return per_gpu.front();
  return sum_on_common_grid(per_gpu);
}

std::vector<PhaseTotal> read_phases_csv(std::istream& in, const std::string& source_name) {
  const CsvTable table = read_csv(in, source_name);
  const std::size_t name_col = require_column(table, "name", source_name);
  const std::size_t begin_col = require_column(table, "begin_s", source_name);
  const std::size_t end_col = require_column(table, "end_s", source_name);
  const auto energy_col = optional_column(table, "energy_j");
  std::vector<PhaseTotal> phases;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto begin = number_at(table, r, begin_col, source_name);
    const auto end = number_at(table, r, end_col, source_name);
    if (!begin || !end || name_col >= table.rows[r].size())
      throw data_error(
          fmt::format("{}:{}: a phase needs name, begin_s and end_s", source_name, table.line_numbers[r]));
    phases.push_back({table.rows[r][name_col], *end - *begin, number_at(table, r, energy_col, source_name)});
  }
  return phases;
}

}  // namespace wattwise::report::html
