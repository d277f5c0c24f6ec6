#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "analysis/metrics.hpp"
#include "cli/analysis_flags.hpp"
#include "cli/commands.hpp"
#include "cli/footprint_flags.hpp"
#include "cli/output_file.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/version.hpp"
#include "report/html/report_input.hpp"
#include "report/html/report_recommend.hpp"

namespace wattwise::cli {

namespace {

struct ReportFlags {
  std::string input;
  std::string output;
  std::string format = "html";
  bool force = false;
  AnalysisFlags analysis;
  FootprintFlagValues footprint;
};

// The HTML report's file: -o, else beside the input; a file there that wattwise did not write is kept
// unless --force says otherwise (checked before any work).
std::string html_output(const ReportFlags& flags) {
  const std::string output =
      flags.output.empty() ? report::html::default_html_path(flags.input).string() : flags.output;
  std::error_code ignored;
  // Only a regular file is read to see whether it is ours (a FIFO or a device is written through, unread).
  if (output != "-" && !flags.force && std::filesystem::is_regular_file(output, ignored) &&
      !report::html::is_wattwise_report(output))
    throw usage_error(fmt::format(
        "'{}' exists and is not a wattwise report: name another file with -o, or replace it with --force",
        output));
  return output;
}

int run_report(const ReportFlags& flags) {
  const auto format = report::html::parse_report_format(flags.format);
  std::error_code ignored;
  if (std::filesystem::is_directory(flags.input, ignored))
    throw usage_error(fmt::format("'{}' is a directory: give a sweep database or a trace CSV", flags.input));
  // A FIFO would hang the read, a link to /dev/zero fill memory.
  require_regular_file(flags.input, "a sweep database or a trace CSV");
  // An HTML page on a terminal helps nobody: it goes beside the input; tables go to stdout.
  const bool html = format == report::html::ReportFormat::kHtml;
  const std::string output = html ? html_output(flags) : flags.output.empty() ? "-" : flags.output;
  const FootprintRates rates = footprint_rates(flags.footprint);  // a bad value fails before any file is made
  analysis::AnalysisOptions options;
  apply_analysis_flags(flags.analysis, options);
  // The box at the top shows one metric: the first --metric, else E (the first that `analyze` lists).
  const auto headline = flags.analysis.metrics.empty()
                            ? analysis::MetricSpec{analysis::MetricKind::kEnergy, 0}
                            : analysis::parse_metric(flags.analysis.metrics.front());
  OutputFile out(output);  // checked before the work starts

  auto model = report::html::load_report_model(flags.input, options, kVersion);
  model.footprint = rates;
  if (!model.recommendations.empty()) report::html::set_headline(model, headline);
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
  app.add_option("-o,--output", flags->output,
                 "the file to write (default for HTML: INPUT with .html, beside it; '-' for stdout)");
  app.add_option("--format", flags->format, "html (default), md or csv")->capture_default_str();
  app.add_flag("--force", flags->force, "replace an existing output file that is not a wattwise report");
  add_analysis_flags(app, flags->analysis);
  add_footprint_flags(app, flags->footprint);
  app.get_option("--metric")
      ->description(
          "the metric of the recommendation at the top (default E): E, edp, ed2p, eds:K, gain-loss, time; "
          "repeat to add more to the tables");
  return [flags]() { return run_report(*flags); };
}

}  // namespace wattwise::cli
