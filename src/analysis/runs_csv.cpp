#include "analysis/runs_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "core/error.hpp"

namespace wattwise::analysis {
namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// How each column of the header is used.
struct Columns {
  std::optional<std::size_t> time_s, energy_j, energy_kj, repeat, work, flops, label;
  std::vector<std::pair<std::size_t, std::string>> knobs;  // column index, knob name
  std::size_t count = 0;
};

Columns read_header(const std::vector<std::string>& names, const std::string& where) {
  Columns columns;
  columns.count = names.size();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string name = lower(trim(names[i]));
    std::optional<std::size_t>* slot = nullptr;
    if (name == "time_s")
      slot = &columns.time_s;
    else if (name == "energy_j")
      slot = &columns.energy_j;
    else if (name == "energy_kj")
      slot = &columns.energy_kj;
    else if (name == "repeat")
      slot = &columns.repeat;
    else if (name == "work")
      slot = &columns.work;
    else if (name == "flops")
      slot = &columns.flops;
    else if (name == "label")
      slot = &columns.label;
    else if (name == "avg_power_w" || name == "power_w")
      continue;
    else if (name.empty())
      throw data_error(fmt::format("{}: column {} has no name; name every column", where, i + 1));
    if (slot == nullptr) {
      columns.knobs.emplace_back(i, name);
      continue;
    }
    if (slot->has_value())
      throw data_error(fmt::format("{}: column '{}' appears twice; keep one", where, name));
    *slot = i;
  }
  if (!columns.time_s)
    throw data_error(fmt::format("{}: no time_s column; a runs CSV needs time_s and energy_j", where));
  if (!columns.energy_j && !columns.energy_kj) {
    throw data_error(fmt::format("{}: no energy_j column; a runs CSV needs time_s and energy_j", where));
  }
  if (columns.energy_j && columns.energy_kj) {
    throw data_error(fmt::format("{}: both energy_j and energy_kj given; keep one", where));
  }
  return columns;
}

std::optional<double> parse_number(const std::string& text) {
  const std::string value = trim(text);
  if (value.empty()) return std::nullopt;
  double parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size() || !std::isfinite(parsed)) {
    throw std::invalid_argument("not a number");
  }
  return parsed;
}

// Reads one numeric cell; `required` cells must not be empty.
std::optional<double> number_cell(const std::vector<std::string>& fields, std::size_t index,
                                  const std::string& column, bool required, const std::string& where) {
  try {
    const auto value = parse_number(fields[index]);
    if (!value && required) throw std::invalid_argument("empty");
    return value;
  } catch (const std::invalid_argument&) {
    throw data_error(fmt::format("{}: column '{}' has '{}', expected a number; fix or remove the row", where,
                                 column, trim(fields[index])));
  }
}

RunRecord read_row(const std::vector<std::string>& fields, const Columns& columns, const std::string& where) {
  if (fields.size() != columns.count) {
    throw data_error(fmt::format("{}: {} fields but the header has {}; quote fields that contain commas",
                                 where, fields.size(), columns.count));
  }
  RunRecord run;
  for (const auto& [index, knob] : columns.knobs) {
    run.setting[knob] = *number_cell(fields, index, knob, true, where);
  }
  run.time_s = *number_cell(fields, *columns.time_s, "time_s", true, where);
  if (columns.energy_j) {
    run.energy_j = *number_cell(fields, *columns.energy_j, "energy_j", true, where);
  } else {
    run.energy_j = *number_cell(fields, *columns.energy_kj, "energy_kj", true, where) * 1000.0;
  }
  if (run.time_s <= 0)
    throw data_error(fmt::format("{}: time_s must be positive; fix or remove the row", where));
  if (run.energy_j < 0)
    throw data_error(fmt::format("{}: energy must not be negative; fix or remove the row", where));
  if (columns.repeat) {
    const auto repeat = number_cell(fields, *columns.repeat, "repeat", false, where);
    // A repeat is a small whole number; a cast of 1e40 to int is undefined behaviour (found by
    // fuzz_runs_csv).
    if (repeat && !(*repeat >= 0 && *repeat <= 1e9 && *repeat == std::floor(*repeat)))
      throw data_error(fmt::format("{}: repeat must be a whole number >= 0; fix or remove the row", where));
    if (repeat) run.repeat = static_cast<int>(*repeat);
  }
  if (columns.work) run.work = number_cell(fields, *columns.work, "work", false, where);
  if (columns.flops) run.flops = number_cell(fields, *columns.flops, "flops", false, where);
  if (columns.label) run.label = trim(fields[*columns.label]);
  return run;
}

bool skipped(const std::string& line) {
  const std::string text = trim(line);
  return text.empty() || text.front() == '#';
}

}  // namespace

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (quoted) throw std::invalid_argument("unclosed quote");
  return fields;
}

std::vector<RunRecord> parse_runs_csv(std::istream& in, const std::string& source_name) {
  std::vector<RunRecord> runs;
  std::optional<Columns> columns;
  std::string line;
  for (std::size_t line_number = 1; std::getline(in, line); ++line_number) {
    if (skipped(line)) continue;
    const std::string where = fmt::format("{}:{}", source_name, line_number);
    std::vector<std::string> fields;
    try {
      fields = split_csv_line(line);
    } catch (const std::invalid_argument&) {
      throw data_error(fmt::format("{}: unclosed quote; a field cannot span lines", where));
    }
    if (!columns) {
      columns = read_header(fields, where);
      continue;
    }
    runs.push_back(read_row(fields, *columns, where));
  }
  if (!columns)
    throw data_error(fmt::format("{}: empty; expected a header with time_s and energy_j", source_name));
  return runs;
}

std::vector<RunRecord> read_runs_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw environment_error(fmt::format("cannot open runs CSV {}; check the path and permissions", path));
  return parse_runs_csv(in, path);
}

}  // namespace wattwise::analysis
