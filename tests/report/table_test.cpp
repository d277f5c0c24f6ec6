#include "report/table.hpp"

#include <gtest/gtest.h>

#include "report/units.hpp"

namespace wattwise::report {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(text.substr(start, nl - start));
  return out;
}

TEST(Table, AlignsColumnsNumbersRight) {
  Table t({"GPU", "energy"});
  t.add_row({"0", "1.5 kJ"});
  t.add_row({"10", "12.25 kJ"});
  const auto l = lines(t.render());
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0], "GPU    energy");
  EXPECT_EQ(l[1], "---  --------");
  EXPECT_EQ(l[2], "0      1.5 kJ");
  EXPECT_EQ(l[3], "10   12.25 kJ");
}

TEST(Table, MultiByteCharactersCountAsOneColumn) {
  Table t({"x", "y"});
  t.add_row({"±1", "a"});
  t.add_row({"22", "b"});
  const auto l = lines(t.render());
  EXPECT_EQ(l[2], "±1  a");
  EXPECT_EQ(l[3], "22  b");
}

TEST(Units, AbsentIsNotZero) {
  EXPECT_EQ(format_energy_j(std::nullopt), "n/a");
  EXPECT_EQ(format_power_w(std::nullopt), "n/a");
  EXPECT_EQ(format_power_w(0.0), "0.0 W");
}

TEST(Units, ASpreadIsInTheMeansUnitWithTwoSignificantDigits) {
  EXPECT_EQ(format_energy_spread_j(68680, 1018.1), "68.68 ± 1.02 kJ");  // not "68.68 kJ ± 1018.1 J"
  EXPECT_EQ(format_seconds_spread(294.98, 0.0041), "294.98 ± 0.0041 s");  // not "± 0.00 s"
  EXPECT_EQ(format_seconds_spread(294.98, 0.0), "294.98 ± 0.00 s");
  EXPECT_EQ(format_energy_spread_j(68680, std::nullopt), "68.68 kJ");  // one run: no spread
}

TEST(Units, EnergyScalesItsUnit) {
  EXPECT_EQ(format_energy_j(12.5), "12.500 J");
  EXPECT_EQ(format_energy_j(250), "250.0 J");
  EXPECT_EQ(format_energy_j(69886), "69.89 kJ");
  EXPECT_EQ(format_energy_j(2.5e6), "2.500 MJ");
  EXPECT_EQ(format_seconds(683.0), "11 min 23 s");
  EXPECT_EQ(format_percent(-4.25), "-4.2%");
}

}  // namespace
}  // namespace wattwise::report
