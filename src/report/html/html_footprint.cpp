#include "report/html/html_footprint.hpp"

#include <fmt/format.h>

#include "core/footprint.hpp"
#include "report/html/html_escape.hpp"

namespace wattwise::report::html {

namespace {

// One figure in each unit the user asked for: "0.0191 kWh &middot; 7.27 gCO2e &middot; 0.00572 EUR".
std::string figures(const Footprint& f, const FootprintRates& rates) {
  std::string out = escape_html(format_kwh(f.energy_kwh));
  if (rates.carbon) out += " &middot; " + escape_html(format_co2e_g(f.co2e_g));
  if (rates.price) out += " &middot; " + escape_html(format_cost(f.cost, rates.price->currency));
  return out;
}

std::string rates_html(const FootprintRates& rates) {
  if (!rates.carbon && !rates.price)
    return "<p class=\"footprint-rates\">No carbon intensity or electricity price was given, so only kWh is "
           "shown: <code>wattwise report &hellip; --carbon-intensity DE --price 0.30EUR</code>, the "
           "environment or the config file add CO2e and cost (docs/footprint.md).</p>\n";
  std::string items;
  if (rates.carbon)
    items += "<li>CO2e at " + escape_html(describe_carbon_intensity(*rates.carbon)) +
             (rates.carbon->region ? " (yearly average of the grid's generation)" : "") + "</li>";
  if (rates.price) items += "<li>cost at " + escape_html(describe_price(*rates.price)) + "</li>";
  return "<ul class=\"footprint-rates\">" + items + "</ul>\n";
}

std::string savings_table_html(const ReportModel& model) {
  const auto& ref = model.settings.at(model.reference_index);
  std::string rows;
  for (const auto& r : model.recommendations) {
    const Saving s =
        saving_against_reference(ref.energy_j.mean, ref.time_s.mean, r.energy_j, model.footprint);
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        escape_html(r.metric.name()), escape_html(model.settings.at(r.setting_index).label),
                        figures(footprint(r.energy_j, model.footprint), model.footprint),
                        figures(s.per_run, model.footprint), figures(s.per_hour, model.footprint));
  }
  return "<table class=\"results footprint\"><thead><tr><th>metric</th><th>setting</th><th>per run</th>"
         "<th>saved per run</th><th>saved per hour of the reference's work</th></tr></thead><tbody>\n" +
         rows + "</tbody></table>\n";
}

}  // namespace

std::string footprint_section_html(const ReportModel& model) {
  if (model.settings.empty()) return "";
  const auto& ref = model.settings.at(model.reference_index);
  std::string body;
  if (model.settings.size() == 1) {
    body = fmt::format("<p>This run: {}.</p>\n",
                       figures(footprint(ref.energy_j.mean, model.footprint), model.footprint));
  } else {
    body = fmt::format(
        "<p>The reference ({}), per run: {}. Saved against it by each recommendation (negative: costs "
        "more); per hour: the work the reference does in an hour, done at the recommended setting.</p>\n",
        escape_html(ref.label), figures(footprint(ref.energy_j.mean, model.footprint), model.footprint));
    body += savings_table_html(model);
  }
  body += rates_html(model.footprint);
  return "<section id=\"footprint\"><h2>Energy in kWh, CO2e and cost</h2>\n" + body + "</section>\n";
}

}  // namespace wattwise::report::html
