#include "report/html/report_input.hpp"

#include <fstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "report/html/html_report.hpp"
#include "report/html/report_builder.hpp"
#include "report/html/report_store.hpp"
#include "report/html/report_tables.hpp"
#include "store/results_store.hpp"
#include "store/analysis_runs.hpp"

namespace wattwise::report::html {

ReportFormat parse_report_format(const std::string& text) {
  if (text == "html") return ReportFormat::kHtml;
  if (text == "md" || text == "markdown") return ReportFormat::kMarkdown;
  if (text == "csv") return ReportFormat::kCsv;
  throw usage_error(fmt::format("unknown report format '{}': use html, md or csv", text));
}

std::filesystem::path phases_path_for(const std::filesystem::path& trace_csv) {
  return trace_csv.parent_path() / (trace_csv.stem().string() + ".phases.csv");
}

std::filesystem::path default_html_path(const std::filesystem::path& input) {
  if (input.extension() == ".html")
    throw usage_error(fmt::format("'{}' ends in .html: name the output with -o FILE.html", input.string()));
  auto out = input;
  return out.replace_extension(".html");
}

bool is_wattwise_report(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.find("<meta name=\"generator\" content=\"wattwise") != std::string::npos;
}

ReportModel load_report_model(const std::filesystem::path& input, const analysis::AnalysisOptions& options,
                              const std::string& tool_version) {
  // Also here, for callers other than `wattwise report`: a FIFO would hang, a link to /dev/zero fill memory.
  require_regular_file(input, "a sweep database or a trace CSV");
  require_regular_file(phases_path_for(input),
                       "the phases CSV of `measure --trace` beside the trace, or nothing");
  std::ifstream probe(input);
  if (!probe)
    throw environment_error(fmt::format(
        "cannot read '{}': give a sweep database (--db of wattwise sweep) or a trace CSV", input.string()));
  ReportModel model;
  if (store::is_database_input(input)) {
    model = build_report_model_from_store(input, options);
  } else {
    ReportInfo info;
    info.title = "wattwise report: " + input.filename().string();
    info.source = input.string();
    std::ifstream phases(phases_path_for(input));
    model = build_report_model_from_trace(probe, phases ? &phases : nullptr, info);
  }
  if (!tool_version.empty()) model.info.tool_version = tool_version;
  return model;
}

std::string render_report(const ReportModel& model, ReportFormat format) {
  switch (format) {
    case ReportFormat::kHtml:
      return render_html_report(model);
    case ReportFormat::kMarkdown:
      return render_tables_markdown(model);
    case ReportFormat::kCsv:
      return render_tables_csv(model);
  }
  throw Error(ErrorKind::kInternal, "render_report: unknown format");
}

}  // namespace wattwise::report::html
