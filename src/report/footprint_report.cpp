#include "report/footprint_report.hpp"

#include <fmt/format.h>

#include "core/text.hpp"
#include "report/table.hpp"
#include "report/units.hpp"

namespace wattwise::report {

namespace {

nlohmann::json optional_json(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

Saving saving_of(const analysis::Analysis& a, const analysis::Recommendation& r,
                 const FootprintRates& rates) {
  const auto& ref = a.reference();
  return saving_against_reference(ref.energy_j.mean, ref.time_s.mean, r.energy_j, rates);
}

// The columns of one period ("run" or "hour"): energy always, CO2e and cost where there is a rate.
void add_period_cells(std::vector<std::string>& row, const Footprint& f, const FootprintRates& rates) {
  row.push_back(format_kwh(f.energy_kwh));
  if (rates.carbon) row.push_back(format_co2e_g(f.co2e_g));
  if (rates.price) row.push_back(format_cost(f.cost, rates.price->currency));
}

void add_period_headers(std::vector<std::string>& headers, const std::string& period,
                        const FootprintRates& rates) {
  headers.push_back("energy/" + period);
  if (rates.carbon) headers.push_back("CO2e/" + period);
  if (rates.price) headers.push_back("cost/" + period);
}

}  // namespace

std::string savings_text(const analysis::Analysis& a, const FootprintRates& rates) {
  if (a.recommendations.empty()) return "";
  std::vector<std::string> headers = {"metric", "setting"};
  add_period_headers(headers, "run", rates);
  add_period_headers(headers, "hour", rates);
  Table table(headers);
  table.set_align(1, Table::Align::kLeft);
  for (const auto& r : a.recommendations) {
    const auto s = saving_of(a, r, rates);
    std::vector<std::string> row = {r.metric.name(), analysis::to_string(r.setting)};
    add_period_cells(row, s.per_run, rates);
    add_period_cells(row, s.per_hour, rates);
    table.add_row(row);
  }
  std::string out =
      "\n Saved against the reference, per run and per hour of the reference's work (negative: costs "
      "more):\n\n";
  out += table.render("   ");
  if (rates.carbon)
    out += fmt::format("   CO2e at {}\n", for_terminal(describe_carbon_intensity(*rates.carbon)));
  if (rates.price) out += fmt::format("   cost at {}\n", for_terminal(describe_price(*rates.price)));
  if (!rates.carbon && !rates.price)
    out +=
        "   CO2e and cost: give --carbon-intensity G|REGION and --price AMOUNT[CURRENCY] "
        "(docs/footprint.md)\n";
  return out;
}

nlohmann::json rates_json(const FootprintRates& rates) {
  using nlohmann::json;
  json j = {{"carbon_intensity", nullptr}, {"price", nullptr}};
  if (rates.carbon)
    j["carbon_intensity"] = {
        {"g_per_kwh", rates.carbon->g_per_kwh},
        {"source", rates.carbon->source},
        {"region", rates.carbon->region ? json(*rates.carbon->region) : json(nullptr)},
        {"data_year", rates.carbon->data_year ? json(*rates.carbon->data_year) : json(nullptr)}};
  if (rates.price)
    j["price"] = {{"per_kwh", rates.price->per_kwh},
                  {"currency", rates.price->currency.empty() ? json(nullptr) : json(rates.price->currency)},
                  {"source", rates.price->source}};
  return j;
}

nlohmann::json footprint_json(std::optional<double> energy_j, const FootprintRates& rates) {
  using nlohmann::json;
  // Without an energy every figure is null; the rates are still reported.
  const Footprint f = footprint(energy_j.value_or(0), rates);
  json j;
  j["energy_kwh"] = energy_j ? json(f.energy_kwh) : json(nullptr);
  j["co2e_g"] = energy_j ? optional_json(f.co2e_g) : json(nullptr);
  j["carbon_intensity"] = rates_json(rates).at("carbon_intensity");
  j["cost"] = nullptr;
  if (rates.price)
    j["cost"] = {{"amount", energy_j ? optional_json(f.cost) : json(nullptr)},
                 {"currency", rates.price->currency.empty() ? json(nullptr) : json(rates.price->currency)},
                 {"price_per_kwh", rates.price->per_kwh},
                 {"source", rates.price->source}};
  return j;
}

std::string footprint_summary_lines(std::optional<double> energy_j, const FootprintRates& rates) {
  if (!energy_j) return "";
  const Footprint f = footprint(*energy_j, rates);
  std::string out;
  if (rates.carbon)
    out += fmt::format("   {:<14}{}  ({})\n", "CO2e", format_co2e_g(f.co2e_g),
                       for_terminal(describe_carbon_intensity(*rates.carbon)));
  if (rates.price)
    out += fmt::format("   {:<14}{}  ({})\n", "cost", format_cost(f.cost, rates.price->currency),
                       for_terminal(describe_price(*rates.price)));
  return out;
}

void add_savings_json(nlohmann::json& analysis_json, const analysis::Analysis& a,
                      const FootprintRates& rates) {
  analysis_json["footprint"] = rates_json(rates);
  auto& recommendations = analysis_json.at("recommendations");
  for (std::size_t i = 0; i < a.recommendations.size() && i < recommendations.size(); ++i) {
    const auto s = saving_of(a, a.recommendations[i], rates);
    recommendations[i]["saving"] = {{"energy_kwh_per_run", s.per_run.energy_kwh},
                                    {"co2e_g_per_run", optional_json(s.per_run.co2e_g)},
                                    {"cost_per_run", optional_json(s.per_run.cost)},
                                    {"energy_kwh_per_hour", s.per_hour.energy_kwh},
                                    {"co2e_g_per_hour", optional_json(s.per_hour.co2e_g)},
                                    {"cost_per_hour", optional_json(s.per_hour.cost)}};
  }
}

}  // namespace wattwise::report
