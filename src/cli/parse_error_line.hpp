#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace wattwise::cli {

// The one line for a command line that CLI11 refused, in our words where its own would puzzle: an
// unknown subcommand ("A subcommand is required" said nothing of it) and a simulated job's flag without
// --simulate; any other error is CLI11's own, with the --help to read.
std::string parse_error_line(const CLI::App& app, const CLI::ParseError& error, int argc,
                             const char* const* argv);

}  // namespace wattwise::cli
