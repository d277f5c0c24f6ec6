#pragma once

#include <filesystem>
#include <string>

#include "analysis/analysis.hpp"
#include "report/html/report_model.hpp"

namespace wattwise::report::html {

// What `wattwise report INPUT [-o FILE] [--format html|md|csv]` needs, so the CLI only parses flags.

enum class ReportFormat { kHtml, kMarkdown, kCsv };

// "html", "md" (or "markdown"), "csv"; anything else is a usage_error listing the choices.
ReportFormat parse_report_format(const std::string& text);

// The phases file a trace CSV has beside it: run.csv -> run.phases.csv (as `wattwise measure --trace`
// writes).
std::filesystem::path phases_path_for(const std::filesystem::path& trace_csv);

// A sweep database (recognised by its SQLite header) or a trace CSV (with its phases file when present).
// `options` applies to databases (reference, metrics, max slowdown). A missing or unreadable input is an
// environment_error naming the file; anything else malformed is a data_error.
ReportModel load_report_model(const std::filesystem::path& input,
                              const analysis::AnalysisOptions& options = {},
                              const std::string& tool_version = "");

// Where `wattwise report INPUT` writes its HTML without -o: INPUT with the extension .html, beside it
// (sweep.db -> sweep.html). An input that already ends in .html is a usage_error (it would overwrite itself).
std::filesystem::path default_html_path(const std::filesystem::path& input);

// Whether `path` holds a page wattwise wrote (its generator meta tag near the top): such a file may be
// replaced by a new report; anything else only with --force.
bool is_wattwise_report(const std::filesystem::path& path);

// The whole output in the chosen format.
std::string render_report(const ReportModel& model, ReportFormat format);

}  // namespace wattwise::report::html
