// The external meter through a user command: the line contract, and meters that hang or print garbage.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "hw/meter_command.hpp"

namespace wattwise::hw {
namespace {

namespace fs = std::filesystem;

std::string meter(const std::string& name) {
  return std::string(WATTWISE_TEST_METERS) + "/" + name;
}

TEST(MeterLine, ReadsJoulesAndWatts) {
  const auto joules = parse_meter_line("1234.5 J\n");
  ASSERT_TRUE(joules);
  EXPECT_DOUBLE_EQ(joules->value, 1234.5);
  EXPECT_EQ(joules->unit, MeterUnit::kJoules);
  const auto watts = parse_meter_line("  245W");
  ASSERT_TRUE(watts);
  EXPECT_DOUBLE_EQ(watts->value, 245);
  EXPECT_EQ(watts->unit, MeterUnit::kWatts);
}

TEST(MeterLine, RefusesAnythingElse) {
  for (const char* line : {"", "245", "W", "245 Watts", "245 kW", "-3 W", "nan W", "inf J", "1 J 2 J",
                           "Instantaneous power reading: 245 Watts"})
    EXPECT_FALSE(parse_meter_line(line)) << line;
}

TEST(MeterCommandLine, SplitsOnBlanksAndKeepsQuotedWordsWhole) {
  EXPECT_EQ(split_meter_command("ipmi-meter --host  bmc1"),
            (std::vector<std::string>{"ipmi-meter", "--host", "bmc1"}));
  EXPECT_EQ(split_meter_command("sh -c 'ipmitool dcmi power reading | awk \"{print $4}\"'"),
            (std::vector<std::string>{"sh", "-c", "ipmitool dcmi power reading | awk \"{print $4}\""}));
  EXPECT_EQ(split_meter_command("a '' b"), (std::vector<std::string>{"a", "", "b"}));
}

TEST(MeterCommandLine, UnclosedQuoteOrEmptyIsAUsageError) {
  for (const char* text : {"sh -c 'oops", "   "}) {
    try {
      split_meter_command(text);
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << text;
    }
  }
}

TEST(MeterCommand, CumulativeJoulesMeterGivesEnergyReadings) {
  const wattwise::testing::TempDir dir("ww-meter");
  const fs::path state = dir / "state";
  ::setenv("METER_STATE", state.c_str(), 1);
  MeterCommand command({meter("joules.sh")});
  EXPECT_EQ(command.read().energy_j, 100.0);
  EXPECT_EQ(command.read().energy_j, 200.0);
  EXPECT_NE(command.origin().find(", J"), std::string::npos);
}

TEST(MeterCommand, WattsMeterGivesPowerReadings) {
  MeterCommand command({meter("watts.sh")});
  const auto reading = command.read();
  EXPECT_EQ(reading.power_w, 250.0);
  EXPECT_FALSE(reading.energy_j);
}

TEST(MeterCommand, HangingMeterIsKilledAtItsTimeout) {
  MeterCommand command({meter("hangs.sh")}, std::chrono::milliseconds(200));
  const auto start = std::chrono::steady_clock::now();
  const auto reading = command.read();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(reading.power_w);
  EXPECT_NE(reading.error.find("timed out"), std::string::npos) << reading.error;
  EXPECT_LT(took, std::chrono::seconds(2));  // not the script's 60 s sleep
}

TEST(MeterCommand, GarbageIsAFailedReadingThatQuotesIt) {
  MeterCommand command({meter("garbage.sh")});
  const auto reading = command.read();
  EXPECT_FALSE(reading.power_w);
  EXPECT_FALSE(reading.energy_j);
  EXPECT_NE(reading.error.find("lots"), std::string::npos) << reading.error;
}

TEST(MeterCommand, FailingOrMissingCommandIsAFailedReading) {
  EXPECT_NE(MeterCommand({"false"}).read().error.find("status 1"), std::string::npos);
  EXPECT_NE(MeterCommand({"/nonexistent/meter"}).read().error.find("cannot start"), std::string::npos);
}

TEST(MeterCommand, CancelEndsACommandInFlight) {
  MeterCommand command({meter("hangs.sh")}, std::chrono::seconds(30));
  command.set_cancelled(true);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(command.read().error.empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace wattwise::hw
