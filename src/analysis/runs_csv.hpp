#pragma once

#include <istream>
#include <string>
#include <vector>

#include "analysis/run_record.hpp"

namespace wattwise::analysis {

// Reads a CSV of runs measured elsewhere (DESIGN.md "Command line" contract). The header decides:
//   time_s, energy_j        required (energy_kj is accepted instead of energy_j and converted to joules)
//   repeat, work, flops     optional numbers (empty cell = absent)
//   label                   optional free text, kept
//   energy_uncertainty_j    optional: energy_j's error bar (+-) from the measurement, not a knob
//   avg_power_w, power_w    ignored: power is always recomputed as energy / time
//   every other column      a knob, named with its unit (power_limit_w, sm_clock_mhz, batch, gpus); numeric
// Column names are trimmed and lower-cased, so published spellings such as power_limit_W and energy_kJ
// read as power_limit_w and energy_kj. Fields may be quoted ("a, b"; "" is a quote). Blank lines and lines
// starting with '#' (tool version, method) are skipped; a UTF-8 byte order mark before the header (Excel)
// is ignored. Numbers are finite decimals: nan, inf, a negative or zero time_s, a negative energy, work or
// flops, and a repeat that is not a whole number are refused. Any malformed row is a data_error naming
// source:line and the column.
std::vector<RunRecord> parse_runs_csv(std::istream& in, const std::string& source_name);

// Opens `path` and parses it; a directory is a usage_error, a file that cannot be opened an
// environment_error.
std::vector<RunRecord> read_runs_csv(const std::string& path);

// Splits one CSV line into fields (quotes honoured); throws std::invalid_argument on an unclosed quote.
std::vector<std::string> split_csv_line(const std::string& line);

}  // namespace wattwise::analysis
