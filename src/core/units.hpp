#pragma once

#include <optional>
#include <string>

namespace wattwise {

// Formatting of quantities for people, the same everywhere (summaries, tables, progress lines). Absent values
// print as "n/a", never as 0.
std::string format_energy_j(std::optional<double> joules);  // "12.3 J", "4.56 kJ", "7.89 MJ"
// The mean with its standard deviation in the same unit: "68.68 ± 1.02 kJ", "294.98 ± 0.0041 s"; the
// mean alone when there is no spread (a single run).
std::string format_energy_spread_j(std::optional<double> mean_j, std::optional<double> stddev_j);
// A measured figure with its error bar (the accounting's +-, not a spread of repeats): "68.68 ± 0.41 kJ".
std::string format_energy_bar_j(std::optional<double> joules, double bar_j);
std::string format_seconds_spread(std::optional<double> mean_s, std::optional<double> stddev_s);
std::string format_power_w(std::optional<double> watts);    // "245.1 W"
std::string format_seconds(std::optional<double> seconds);  // "0.512 s", "12.34 s", "5 min 03 s"
std::string format_percent(std::optional<double> percent, bool with_sign = true);  // "+4.2%"
// A signed percentage said to be over `limit_pct`, with the decimals (one to four) that show it over: +10.03
// against 10 is "+10.03%", not "+10.0%", which reads as equal to the limit.
std::string format_percent_over(double percent, double limit_pct);
std::string format_number(std::optional<double> value, int decimals);

}  // namespace wattwise
