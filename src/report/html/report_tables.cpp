#include "report/html/report_tables.hpp"

#include <fmt/format.h>

namespace wattwise::report::html {

namespace {

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// Markdown cells must not contain a pipe.
std::string md_cell(std::string text) {
  std::string out;
  for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string csv_number(const std::optional<double>& value) {
  return value ? fmt::format("{}", *value) : "";
}

std::string setting_text(const ReportModel& model, const TableRow& row) {
  return row.setting_index == model.reference_index ? row.setting + " (reference)" : row.setting;
}

}  // namespace

std::string table_number(const std::optional<double>& value, int decimals) {
  return value ? fmt::format("{:.{}f}", *value, decimals) : "n/a";
}

std::string table_percent(const std::optional<double>& value) {
  return value ? fmt::format("{:+.1f}", *value) : "n/a";
}

std::string render_tables_markdown(const ReportModel& model) {
  std::string out = fmt::format("## {}\n\n", model.info.title);
  out += fmt::format("{}.\n\n", md_cell(analysis::basis_text(model.basis)));
  if (const auto warning = analysis::startup_warning(model.basis); !warning.empty())
    out += fmt::format("**Warning:** {}.\n\n", md_cell(warning));
  if (const auto scope = analysis::scope_text(model.scope); !scope.empty())
    out += fmt::format("{}.\n\n", md_cell(scope));
  for (const auto& line : model.scope_warnings)
    out += fmt::format("**Warning:** the energy scopes pick differently for {}.\n\n", md_cell(line));
  // The measurement's error bar in a column of its own where the runs carry one (docs/report.md).
  bool bar = false;
  for (const auto& row : model.table) bar = bar || row.energy_uncertainty_j.has_value();
  out += fmt::format(
      "| setting | avg power (W) | energy (J) |{} energy vs ref (%) | time (s) | time vs ref (%) | optimum for "
      "|\n",
      bar ? " meas. ± (J) |" : "");
  out += fmt::format("| --- | ---: | ---: |{} ---: | ---: | ---: | --- |\n", bar ? " ---: |" : "");
  for (const auto& row : model.table) {
    out += fmt::format("| {} | {} | {} |{} {} | {} | {} | {} |\n", md_cell(setting_text(model, row)),
                       table_number(row.power_w, 1), table_number(row.energy_j, 1),
                       bar ? fmt::format(" {} |", table_number(row.energy_uncertainty_j, 1)) : std::string(),
                       table_percent(row.energy_vs_ref_pct), table_number(row.time_s, 3),
                       table_percent(row.time_vs_ref_pct), md_cell(join(row.optimum_for, ", ")));
  }
  // One run has nothing to compare with: every metric would name it, "+0.0%" seven times.
  if (model.recommendations.empty() || model.single_run) return out;
  const bool both = !model.other_scope_picks.empty();
  const std::string other_header =
      model.scope.scope == analysis::EnergyScope::kNode ? "on job GPUs' energy" : "on node energy";
  out += fmt::format(
      "\n| metric | best setting | energy vs ref (%) | time vs ref (%) | beyond noise | within the noise "
      "|{}\n",
      both ? fmt::format(" {} |", other_header) : std::string());
  out += fmt::format("| --- | --- | ---: | ---: | --- | --- |{}\n", both ? " --- |" : "");
  for (std::size_t k = 0; k < model.recommendations.size(); ++k) {
    const auto& r = model.recommendations[k];
    const std::string significant = r.significant ? (*r.significant ? "yes" : "no") : "unknown";
    std::string band = r.band_known ? "" : "unknown";
    for (const auto& member : r.band)
      if (r.band_known) band += (band.empty() ? "" : ", ") + model.settings.at(member.setting_index).label;
    out += fmt::format("| {} | {} | {} | {} | {} | {} |{}\n", md_cell(r.metric.name()),
                       md_cell(model.settings.at(r.setting_index).label), table_percent(r.energy_vs_ref_pct),
                       table_percent(r.time_vs_ref_pct), significant, md_cell(band),
                       both ? fmt::format(" {} |", md_cell(model.other_scope_picks.at(k))) : std::string());
  }
  return out;
}

std::string render_tables_csv(const ReportModel& model) {
  std::string out;
  for (const auto& knob : model.knobs) out += csv_cell(knob) + ",";
  out += "power_w,energy_j,energy_vs_ref_pct,time_s,time_vs_ref_pct,reference,optimum_for,energy_uncertainty_j\n";
  for (const auto& row : model.table) {
    const auto& setting = model.settings.at(row.setting_index).setting;
    for (const auto& knob : model.knobs) {
      const auto it = setting.find(knob);
      out += (it == setting.end() ? std::string() : fmt::format("{}", it->second)) + ",";
    }
    out += fmt::format("{},{},{},{},{},{},{},{}\n", csv_number(row.power_w), csv_number(row.energy_j),
                       csv_number(row.energy_vs_ref_pct), csv_number(row.time_s),
                       csv_number(row.time_vs_ref_pct), row.setting_index == model.reference_index ? 1 : 0,
                       csv_cell(join(row.optimum_for, ";")), csv_number(row.energy_uncertainty_j));
  }
  return out;
}

}  // namespace wattwise::report::html
