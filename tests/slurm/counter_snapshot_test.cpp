// The energy between the prolog's and the epilog's counter readings.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "slurm/counter_snapshot.hpp"

namespace wattwise::slurm {
namespace {

CounterSnapshot snapshot(double time_unix_s, std::vector<CounterReading> gpus) {
  return {time_unix_s, std::move(gpus)};
}

TEST(CounterSnapshot, EnergyBetweenIsEachGpusCounterDifferenceMatchedByUuid) {
  const auto before = snapshot(100.0, {{0, "GPU-a", 1'000'000}, {1, "GPU-b", 5'000'000}});
  // Listed in another order (and at other indices) at the end: the UUID decides.
  const auto after = snapshot(110.5, {{0, "GPU-b", 5'250'000}, {1, "GPU-a", 3'000'000}});
  const auto e = energy_between(before, after);
  EXPECT_DOUBLE_EQ(e.at("elapsed_s").get<double>(), 10.5);
  ASSERT_EQ(e.at("gpus").size(), 2u);
  EXPECT_EQ(e["gpus"][0].at("uuid"), "GPU-b");
  EXPECT_DOUBLE_EQ(e["gpus"][0].at("energy_j").get<double>(), 250.0);
  EXPECT_DOUBLE_EQ(e["gpus"][1].at("energy_j").get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(e.at("energy_j").get<double>(), 2250.0);
}

TEST(CounterSnapshot, ACounterThatWentBackwardsOrAMissingReadingIsNullAndSoIsTheSum) {
  const auto before = snapshot(0, {{0, "GPU-a", 9'000}, {1, "GPU-b", std::nullopt}, {2, "GPU-c", 1'000}});
  const auto after = snapshot(1, {{0, "GPU-a", 1'000},
                                  {1, "GPU-b", 5'000},
                                  {2, "GPU-c", 3'000},
                                  {3, "GPU-new", 7'000}});  // not read by the prolog
  const auto e = energy_between(before, after);
  EXPECT_TRUE(e["gpus"][0].at("energy_j").is_null());  // driver reloaded: the counter restarted
  EXPECT_TRUE(e["gpus"][1].at("energy_j").is_null());
  EXPECT_DOUBLE_EQ(e["gpus"][2].at("energy_j").get<double>(), 2.0);
  EXPECT_TRUE(e["gpus"][3].at("energy_j").is_null());
  EXPECT_TRUE(e.at("energy_j").is_null());
}

TEST(CounterSnapshot, JsonRoundTripAndAForeignFileIsADataErrorNamingIt) {
  const auto s = snapshot(42.25, {{3, "GPU-x", 123'456'789'012ULL}, {4, "GPU-y", std::nullopt}});
  const auto back = counter_snapshot_from_json(to_json(s), "p.json");
  EXPECT_EQ(to_json(back), to_json(s));
  try {
    counter_snapshot_from_json({{"kind", "slurm-merge"}}, "merged.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(std::string(e.what()).find("merged.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wattwise::slurm
