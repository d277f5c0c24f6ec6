#include <gtest/gtest.h>

#include <sstream>

#include "analysis/runs_csv.hpp"
#include "core/error.hpp"

namespace wattwise::analysis {
namespace {

std::vector<RunRecord> parse(const std::string& text) {
  std::istringstream in(text);
  return parse_runs_csv(in, "runs.csv");
}

// The data_error message for `text`, or a failure if it parses.
std::string error_for(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    return e.what();
  }
  ADD_FAILURE() << "expected a data_error for:\n" << text;
  return "";
}

TEST(RunsCsv, ReadsKnobsAndReservedColumns) {
  const auto runs = parse(
      "power_limit_w,batch,repeat,time_s,energy_j,work,label\n"
      "150,64,1,45.5,5400,100000,capped\n"
      "300,64,2,39.7,7206,,\n");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].setting, (Setting{{"batch", 64}, {"power_limit_w", 150}}));
  EXPECT_EQ(runs[0].repeat, 1);
  EXPECT_DOUBLE_EQ(runs[0].time_s, 45.5);
  EXPECT_DOUBLE_EQ(runs[0].energy_j, 5400);
  EXPECT_EQ(runs[0].work, std::optional<double>(100000));
  EXPECT_EQ(runs[0].label, "capped");
  EXPECT_FALSE(runs[1].work.has_value());
  EXPECT_FALSE(runs[1].flops.has_value());
}

TEST(RunsCsv, QuotedFieldsKeepCommasAndQuotes) {
  const auto runs = parse(
      "label,power_limit_w,time_s,energy_j\n"
      "\"default, as shipped \"\"300\"\"\",300,39.7,7206\n");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].label, "default, as shipped \"300\"");
  EXPECT_DOUBLE_EQ(runs[0].setting.at("power_limit_w"), 300);
}

TEST(RunsCsv, PublishedSpellingsAreAliases) {
  // power_limit_W -> power_limit_w, energy_kJ -> joules, avg_power_W ignored (recomputed as E / t).
  const auto runs = parse("power_limit_W,avg_power_W,energy_kJ,time_s\n300,181.4,7.206,39.7\n");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].setting, (Setting{{"power_limit_w", 300}}));
  EXPECT_DOUBLE_EQ(runs[0].energy_j, 7206);
}

TEST(RunsCsv, SkipsBlankAndCommentLines) {
  const auto runs =
      parse("# wattwise 0.1.0, method: energy counter\npower_limit_w,time_s,energy_j\n\n150,1,2\n");
  EXPECT_EQ(runs.size(), 1u);
}

TEST(RunsCsv, MalformedNumberNamesFileLineAndColumn) {
  const std::string message = error_for("power_limit_w,time_s,energy_j\n150,1,2\n155,abc,2\n");
  EXPECT_NE(message.find("runs.csv:3"), std::string::npos) << message;
  EXPECT_NE(message.find("time_s"), std::string::npos) << message;
}

TEST(RunsCsv, WrongFieldCountNamesTheLine) {
  const std::string message = error_for("power_limit_w,time_s,energy_j\n150,1,2,9\n");
  EXPECT_NE(message.find("runs.csv:2"), std::string::npos) << message;
}

TEST(RunsCsv, UnclosedQuoteNamesTheLine) {
  const std::string message = error_for("label,time_s,energy_j\n\"oops,1,2\n");
  EXPECT_NE(message.find("runs.csv:2"), std::string::npos) << message;
}

TEST(RunsCsv, MissingRequiredColumnsAreErrors) {
  EXPECT_NE(error_for("power_limit_w,energy_j\n150,2\n").find("time_s"), std::string::npos);
  EXPECT_NE(error_for("power_limit_w,time_s\n150,2\n").find("energy_j"), std::string::npos);
  EXPECT_NE(error_for("").find("empty"), std::string::npos);
}

TEST(RunsCsv, NonPositiveTimeIsAnError) {
  EXPECT_NE(error_for("power_limit_w,time_s,energy_j\n150,0,2\n").find("runs.csv:2"), std::string::npos);
}

TEST(RunsCsv, MissingFileIsAnEnvironmentError) {
  try {
    read_runs_csv("/nonexistent/runs.csv");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
  }
}

// Excel writes a UTF-8 byte order mark before the header; the first column must still read as its name.
TEST(RunsCsv, ByteOrderMarkBeforeTheHeaderIsIgnored) {
  const auto runs = parse("\xEF\xBB\xBFtime_s,energy_j,power_limit_w\n1,100,200\n");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_DOUBLE_EQ(runs[0].time_s, 1);
  EXPECT_EQ(runs[0].setting, (Setting{{"power_limit_w", 200}}));
}

TEST(RunsCsv, NanInfAndNegativeValuesNameTheRowAndColumn) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"power_limit_w,time_s,energy_j\n150,1,2\n155,nan,2\n", "time_s"},
      {"power_limit_w,time_s,energy_j\n150,1,2\n155,inf,2\n", "time_s"},
      {"power_limit_w,time_s,energy_j\n150,1,2\n155,-1,2\n", "time_s"},
      {"power_limit_w,time_s,energy_j\n150,1,2\n155,1,-2\n", "energy_j"},
      {"power_limit_w,time_s,energy_j\n150,1,2\nnan,1,2\n", "power_limit_w"},
      {"power_limit_w,time_s,energy_j,work\n150,1,2,1\n155,1,2,-5\n", "work"},
      {"power_limit_w,time_s,energy_j,repeat\n150,1,2,1\n155,1,2,1e300\n", "repeat"},
      {"power_limit_w,time_s,energy_j,repeat\n150,1,2,1\n155,1,2,0.5\n", "repeat"},
  };
  for (const auto& [text, column] : cases) {
    const std::string message = error_for(text);
    EXPECT_NE(message.find("runs.csv:3"), std::string::npos) << message;
    EXPECT_NE(message.find("'" + column + "'"), std::string::npos) << message;
  }
}

TEST(RunsCsv, DirectoryIsAUsageErrorThatSaysSo) {
  try {
    read_runs_csv("/tmp");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wattwise::analysis
