#include "analysis/runs_csv.hpp"

#include "core/input_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/numbers.hpp"
#include "core/text.hpp"

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

constexpr double kMaxRepeat = 1'000'000;
// Excel and Windows tools start a UTF-8 file with this byte order mark.
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// How each column of the header is used.
struct Columns {
  std::optional<std::size_t> time_s, energy_j, energy_kj, energy_uncertainty_j, repeat, work, flops, label;
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
    else if (name == "energy_uncertainty_j")
      slot = &columns.energy_uncertainty_j;
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

// Reads one numeric cell; `required` cells must not be empty. Only finite decimal numbers are numbers:
// nan and inf are refused like any other word, naming the row and the column.
std::optional<double> number_cell(const std::vector<std::string>& fields, std::size_t index,
                                  const std::string& column, bool required, const std::string& where) {
  const std::string text = trim(fields[index]);
  if (text.empty() && !required) return std::nullopt;
  const auto parsed = parse_number(text);
  if (!parsed) {
    throw data_error(fmt::format("{}: column '{}' has '{}', expected a finite number; fix or remove the row",
                                 where, column, text));
  }
  return parsed;
}

// A measured quantity that cannot be negative (or zero, for time).
void check_not_negative(double value, const std::string& column, bool zero_allowed,
                        const std::string& where) {
  if (value > 0 || (zero_allowed && value == 0)) return;
  throw data_error(fmt::format("{}: column '{}' has {}, which must be {}; fix or remove the row", where,
                               column, value, zero_allowed ? "zero or more" : "more than zero"));
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
  check_not_negative(run.time_s, "time_s", false, where);
  check_not_negative(run.energy_j, columns.energy_j ? "energy_j" : "energy_kj", true, where);
  if (columns.repeat) {
    const auto repeat = number_cell(fields, *columns.repeat, "repeat", false, where);
    if (repeat && (*repeat < 0 || *repeat > kMaxRepeat || *repeat != std::floor(*repeat)))
      throw data_error(fmt::format("{}: column 'repeat' has {}, expected a whole number from 0 to {}", where,
                                   *repeat, kMaxRepeat));
    if (repeat) run.repeat = static_cast<int>(*repeat);
  }
  if (columns.energy_uncertainty_j) {
    run.energy_uncertainty_j =
        number_cell(fields, *columns.energy_uncertainty_j, "energy_uncertainty_j", false, where);
    if (run.energy_uncertainty_j) check_not_negative(*run.energy_uncertainty_j, "energy_uncertainty_j", true, where);
  }
  if (columns.work) run.work = number_cell(fields, *columns.work, "work", false, where);
  if (columns.flops) run.flops = number_cell(fields, *columns.flops, "flops", false, where);
  if (run.work) check_not_negative(*run.work, "work", true, where);
  if (run.flops) check_not_negative(*run.flops, "flops", true, where);
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
    if (line_number == 1 && line.starts_with(kUtf8Bom)) line.erase(0, kUtf8Bom.size());
    make_valid_utf8(line);  // labels and knob names may be any bytes; JSON and reports need UTF-8
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
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw usage_error(fmt::format("{} is a directory: give a runs CSV file (or a sweep database)", path));
  require_regular_file(path, "a runs CSV (or a sweep database)");  // a FIFO hangs, /dev/zero fills memory
  std::ifstream in(path);
  if (!in)
    throw environment_error(fmt::format("cannot open runs CSV {}; check the path and permissions", path));
  return parse_runs_csv(in, path);
}

}  // namespace wattwise::analysis
