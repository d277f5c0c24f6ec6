#include "cli/flag_values.hpp"

#include <gtest/gtest.h>

#include "../support/error_kind.hpp"
#include "core/error.hpp"

namespace wattwise::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using wattwise::testing::kind_of_failure;

TEST(FlagValues, DurationsReadInTheirUnit) {
  EXPECT_EQ(parse_duration("--timeout", "3600", DurationUnit::kSeconds, kMinTimeoutS, kMaxTimeoutS),
            seconds(3600));
  EXPECT_EQ(parse_duration("--interval", "20", DurationUnit::kMilliseconds, kMinIntervalMs, kMaxIntervalMs),
            milliseconds(20));
  EXPECT_EQ(parse_duration("--timeout", "0.5", DurationUnit::kSeconds, kMinTimeoutS, kMaxTimeoutS),
            milliseconds(500));
  EXPECT_EQ(parse_duration("--cooldown", "0", DurationUnit::kSeconds, kMinCooldownS, kMaxCooldownS),
            Nanos(0));
  EXPECT_EQ(parse_duration("--timeout", "31622400", DurationUnit::kSeconds, kMinTimeoutS, kMaxTimeoutS),
            seconds(31'622'400));
}

// Before: "abc" reached std::stod (internal error) and nan, inf and 1e300 an undefined chrono conversion.
TEST(FlagValues, AnythingButAFiniteNumberInRangeIsAUsageErrorNamingTheFlagAndUnit) {
  for (const char* bad : {"abc", "", "nan", "inf", "-inf", "1e300", "-1", "0", "5s", " 5", "0x10", "+5"}) {
    try {
      parse_duration("--timeout", bad, DurationUnit::kSeconds, kMinTimeoutS, kMaxTimeoutS);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << bad;
      const std::string message = e.what();
      EXPECT_NE(message.find("--timeout"), std::string::npos) << message;
      EXPECT_NE(message.find("seconds"), std::string::npos) << message;
      EXPECT_NE(message.find("31622400"), std::string::npos) << message;
    }
  }
  EXPECT_EQ(kind_of_failure([] {
              parse_duration("--interval", "0", DurationUnit::kMilliseconds, kMinIntervalMs, kMaxIntervalMs);
            }),
            ErrorKind::kUsage);
}

TEST(FlagValues, CountsAreWholeNumbersInRange) {
  EXPECT_EQ(parse_count("--job-gpus", "2", 1, 2), 2u);
  for (const char* bad : {"0", "3", "-1", "1.5", "", "x", "99999999999999999999999"})
    EXPECT_EQ(kind_of_failure([&] { parse_count("--job-gpus", bad, 1, 2); }), ErrorKind::kUsage) << bad;
}

}  // namespace
}  // namespace wattwise::cli
