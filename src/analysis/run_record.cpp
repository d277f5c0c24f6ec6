#include "analysis/run_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace wattwise::analysis {
namespace {

bool same_value(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)});
}

}  // namespace

std::string to_string(const Setting& setting) {
  std::string text;
  for (const auto& [knob, value] : setting) {
    if (!text.empty()) text += ',';
    text += fmt::format("{}={}", knob, value);
  }
  return text;
}

bool same_setting(const Setting& a, const Setting& b) {
  return a.size() == b.size() && matches(a, b);
}

bool matches(const Setting& setting, const Setting& partial) {
  for (const auto& [knob, value] : partial) {
    const auto found = setting.find(knob);
    if (found == setting.end() || !same_value(found->second, value)) return false;
  }
  return true;
}

}  // namespace wattwise::analysis
