// The one parser of numbers in text (core/numbers.hpp).
#include "core/numbers.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace wattwise {
namespace {

TEST(ParseNumber, ReadsTheWholeTextAsAFiniteDecimalNumber) {
  EXPECT_EQ(parse_number("150"), 150.0);
  EXPECT_EQ(parse_number("232.5"), 232.5);
  EXPECT_EQ(parse_number("-0.5"), -0.5);
  EXPECT_EQ(parse_number("1e3"), 1000.0);
}

TEST(ParseNumber, RefusesAnythingElse) {
  for (const char* text : {"", "128x", " 5", "5 ", "+5", "0x10", "nan", "inf", "-inf", "1e999", "1,5", "."})
    EXPECT_EQ(parse_number(text), std::nullopt) << "'" << text << "'";
}

TEST(ParseInteger, ReadsAWholeNumberInTheTypesRange) {
  EXPECT_EQ(parse_integer<int>("42"), 42);
  EXPECT_EQ(parse_integer<long long>("-7"), -7);
  EXPECT_EQ(parse_integer<std::uint64_t>("18446744073709551615"), UINT64_MAX);
}

TEST(ParseInteger, RefusesFractionsSignsOutOfRangeAndTrailingText) {
  EXPECT_EQ(parse_integer<int>(""), std::nullopt);
  EXPECT_EQ(parse_integer<int>("4.5"), std::nullopt);
  EXPECT_EQ(parse_integer<int>("12abc"), std::nullopt);
  EXPECT_EQ(parse_integer<unsigned>("-1"), std::nullopt);
  EXPECT_EQ(parse_integer<int>("2147483648"), std::nullopt);
  EXPECT_EQ(parse_integer<int>(" 1"), std::nullopt);
}

}  // namespace
}  // namespace wattwise
