#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/analysis_flags.hpp"
#include "cli/commands.hpp"
#include "cli/footprint_flags.hpp"
#include "cli/output_file.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "report/html/report_input.hpp"

namespace wattwise::cli {

namespace {

struct ReportFlags {
  std::string input;
  std::string output;
  std::string format = "html";
  AnalysisFlags analysis;
  FootprintFlagValues footprint;
};

int run_report(const ReportFlags& flags) {
  const auto format = report::html::parse_report_format(flags.format);
  std::error_code ignored;
  if (std::filesystem::is_directory(flags.input, ignored))
    throw usage_error(fmt::format("'{}' is a directory: give a sweep database or a trace CSV", flags.input));
  // An HTML page on a terminal helps nobody: ask for a file, but let tables go to stdout.
  std::string output = flags.output;
  if (output.empty()) {
    if (format == report::html::ReportFormat::kHtml)
      throw usage_error(
          "the HTML report needs a file: `wattwise report INPUT -o report.html` (or --format md|csv)");
    output = "-";
  }
  const FootprintRates rates = footprint_rates(flags.footprint);  // a bad value fails before any file is made
  OutputFile out(output);                                         // checked before the work starts

  analysis::AnalysisOptions options;
  apply_analysis_flags(flags.analysis, options);

  auto model = report::html::load_report_model(flags.input, options, kVersion);
  model.footprint = rates;
  out.stream() << report::html::render_report(model, format);
  out.commit();
  if (output != "-") std::cerr << fmt::format("wattwise: report written to {}\n", output);
  return 0;
}

}  // namespace

CommandRun add_report_command(CLI::App& app) {
  auto flags = std::make_shared<ReportFlags>();
  app.add_option("input", flags->input, "a sweep database, or a trace CSV of `wattwise measure --trace`")
      ->required();
  app.add_option("-o,--output", flags->output, "the file to write ('-' for stdout with --format md|csv)");
  app.add_option("--format", flags->format, "html (default), md or csv")->capture_default_str();
  add_analysis_flags(app, flags->analysis);
  add_footprint_flags(app, flags->footprint);
  return [flags]() { return run_report(*flags); };
}

}  // namespace wattwise::cli
