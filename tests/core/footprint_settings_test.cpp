// Where the carbon intensity and the price come from: flag > environment > config file > nothing.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "core/footprint_settings.hpp"

namespace wattwise {
namespace {

class FootprintSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.xdg_config_home = dir_.string();  // never the developer's own config
  }

  std::filesystem::path write_config(const std::string& text) {
    std::filesystem::create_directories(dir_ / "wattwise");
    const auto path = dir_ / "wattwise" / "config.json";
    std::ofstream(path) << text;
    return path;
  }

  int exit_code_of(const FootprintFlagValues& flags) {
    try {
      resolve_footprint_rates(flags, env_);
    } catch (const Error& e) {
      return e.exit_code();
    }
    return 0;
  }

  const wattwise::testing::TempDir temp_{"ww-footprint"};
  const std::filesystem::path& dir_ = temp_.path();
  FootprintEnvironment env_;
};

TEST_F(FootprintSettingsTest, NothingGivenMeansNoRatesNeverAnInventedDefault) {
  const auto rates = resolve_footprint_rates({}, env_);
  EXPECT_FALSE(rates.carbon.has_value());
  EXPECT_FALSE(rates.price.has_value());
}

TEST_F(FootprintSettingsTest, ConfigFileUnderXdgConfigHomeIsRead) {
  const auto path = write_config(R"({"footprint": {"carbon_intensity": "FR", "price": 0.2}})");
  const auto rates = resolve_footprint_rates({}, env_);
  ASSERT_TRUE(rates.carbon && rates.price);
  EXPECT_EQ(rates.carbon->region, "FR");
  EXPECT_EQ(rates.carbon->source, "config " + path.string());
  EXPECT_DOUBLE_EQ(rates.price->per_kwh, 0.2);
  EXPECT_EQ(rates.price->currency, "");
}

TEST_F(FootprintSettingsTest, HomeDotConfigIsTheDefaultWithoutXdgConfigHome) {
  env_.xdg_config_home.reset();
  env_.home = dir_.string();
  std::filesystem::create_directories(dir_ / ".config" / "wattwise");
  std::ofstream(dir_ / ".config" / "wattwise" / "config.json")
      << R"({"footprint": {"carbon_intensity": 123}})";
  const auto rates = resolve_footprint_rates({}, env_);
  ASSERT_TRUE(rates.carbon);
  EXPECT_DOUBLE_EQ(rates.carbon->g_per_kwh, 123);
}

TEST_F(FootprintSettingsTest, FlagBeatsEnvironmentBeatsConfigForEachSettingOnItsOwn) {
  write_config(R"({"footprint": {"carbon_intensity": 100, "price": "0.10EUR"}})");
  env_.carbon_intensity = "200";
  auto rates = resolve_footprint_rates({}, env_);
  EXPECT_DOUBLE_EQ(rates.carbon->g_per_kwh, 200);  // environment over file
  EXPECT_EQ(rates.carbon->source, "WATTWISE_CARBON_INTENSITY");
  EXPECT_DOUBLE_EQ(rates.price->per_kwh, 0.10);  // the file still gives the price
  rates = resolve_footprint_rates({std::string("300"), std::string("0.40USD")}, env_);
  EXPECT_DOUBLE_EQ(rates.carbon->g_per_kwh, 300);  // flag over environment
  EXPECT_EQ(rates.carbon->source, "--carbon-intensity");
  EXPECT_EQ(rates.price->currency, "USD");
  EXPECT_EQ(rates.price->source, "--price");
}

TEST_F(FootprintSettingsTest, WattwiseConfigNamesTheFileAndMustExist) {
  const auto other = dir_ / "elsewhere.json";
  std::ofstream(other) << R"({"footprint": {"price": "0.5 GBP"}})";
  env_.config = other.string();
  auto rates = resolve_footprint_rates({}, env_);
  ASSERT_TRUE(rates.price);
  EXPECT_EQ(rates.price->currency, "GBP");
  env_.config = (dir_ / "missing.json").string();
  EXPECT_EQ(exit_code_of({}), 2);
}

TEST_F(FootprintSettingsTest, MalformedConfigAndUnknownKeysAreUsageErrors) {
  write_config("{not json");
  EXPECT_EQ(exit_code_of({}), 2);
  write_config(R"({"footprint": {"carbon_intensty": 100}})");
  EXPECT_EQ(exit_code_of({}), 2);
  write_config(R"({"footprint": {"carbon_intensity": [1]}})");
  EXPECT_EQ(exit_code_of({}), 2);
  write_config(R"({"footprint": {"carbon_intensity": -5}})");
  EXPECT_EQ(exit_code_of({}), 2);
  write_config(R"({"other_tool_section": {}})");  // other sections are for later: not an error
  EXPECT_EQ(exit_code_of({}), 0);
}

TEST_F(FootprintSettingsTest, BadEnvironmentValueIsAUsageErrorEvenWhenTheFileIsFine) {
  write_config(R"({"footprint": {"price": "0.10EUR"}})");
  env_.price = "cheap";
  EXPECT_EQ(exit_code_of({}), 2);
}

TEST_F(FootprintSettingsTest, UnreadableConfigIsAnEnvironmentError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  const auto path = write_config(R"({"footprint": {"price": "0.10EUR"}})");
  ::chmod(path.c_str(), 0);
  EXPECT_EQ(exit_code_of({}), 3);
}

}  // namespace
}  // namespace wattwise
