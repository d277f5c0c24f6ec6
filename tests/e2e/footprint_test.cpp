// kWh, CO2e and cost in `measure`'s summary and JSON, `analyze` and `report` (docs/footprint.md): from
// the flags, the environment or the config file, in that order of precedence, and bad values refused with
// one line and exit 2 before the job runs. A simulated job gives the same energy every time, so the
// figures can be checked exactly against its energy_j.
#include <gtest/gtest.h>

#include <fstream>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

class FootprintTest : public E2eTest {
 protected:
  // `measure --simulate` with these extra flags; the JSON is read back.
  nlohmann::json measure(const std::vector<std::string>& extra, std::string* summary = nullptr) {
    std::vector<std::string> args = {"measure", "--simulate", "v100:resnet50",        "--epochs",
                                     "1",       "--json",     path("m.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = wattwise(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (summary) *summary = r.err;
    return read_json("m.json");
  }

  std::filesystem::path write_config(const std::string& text) {
    const auto dir = std::filesystem::path(env_.at("XDG_CONFIG_HOME")) / "wattwise";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << text;
    return dir / "config.json";
  }
};

TEST_F(FootprintTest, WithoutAnySettingOnlyKilowattHoursAreShown) {
  std::string summary;
  const auto m = measure({}, &summary);
  const double energy_j = m.at("energy_j");
  EXPECT_DOUBLE_EQ(m.at("energy_kwh").get<double>(), energy_j / 3.6e6);
  EXPECT_TRUE(m.at("co2e_g").is_null());
  EXPECT_TRUE(m.at("carbon_intensity").is_null());
  EXPECT_TRUE(m.at("cost").is_null());
  EXPECT_NE(summary.find(" kWh)"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("CO2e"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("cost"), std::string::npos) << summary;
}

TEST_F(FootprintTest, FlagsGiveCo2eAndCostInJsonAndSummary) {
  std::string summary;
  const auto m = measure({"--carbon-intensity", "400", "--price", "0.30EUR"}, &summary);
  const double kwh = m.at("energy_j").get<double>() / 3.6e6;
  EXPECT_NEAR(m.at("co2e_g").get<double>(), 400 * kwh, 1e-9 * 400 * kwh);
  EXPECT_EQ(m.at("carbon_intensity").at("g_per_kwh"), 400);
  EXPECT_EQ(m.at("carbon_intensity").at("source"), "--carbon-intensity");
  EXPECT_TRUE(m.at("carbon_intensity").at("region").is_null());
  EXPECT_NEAR(m.at("cost").at("amount").get<double>(), 0.30 * kwh, 1e-9);
  EXPECT_EQ(m.at("cost").at("currency"), "EUR");
  EXPECT_EQ(m.at("cost").at("source"), "--price");
  EXPECT_NE(summary.find("CO2e "), std::string::npos) << summary;
  EXPECT_NE(summary.find("400 gCO2e/kWh, from --carbon-intensity"), std::string::npos) << summary;
  EXPECT_NE(summary.find(" EUR  (0.3 EUR/kWh, from --price)"), std::string::npos) << summary;
}

TEST_F(FootprintTest, RegionFromTheEnvironmentTakesTheTablesDatedFigure) {
  env_["WATTWISE_CARBON_INTENSITY"] = "fr";
  env_["WATTWISE_PRICE"] = "0.2";
  std::string summary;
  const auto m = measure({}, &summary);
  const auto& carbon = m.at("carbon_intensity");
  EXPECT_EQ(carbon.at("region"), "FR");
  EXPECT_EQ(carbon.at("g_per_kwh"), 56.04);
  EXPECT_EQ(carbon.at("data_year"), 2023);
  EXPECT_EQ(carbon.at("source"), "WATTWISE_CARBON_INTENSITY");
  EXPECT_TRUE(m.at("cost").at("currency").is_null());
  EXPECT_NE(summary.find("FR, Ember 2023, from WATTWISE_CARBON_INTENSITY"), std::string::npos) << summary;
}

TEST_F(FootprintTest, ConfigFileUnderXdgConfigHomeIsRead) {
  const auto config = write_config(R"({"footprint": {"carbon_intensity": "world", "price": "0.15 usd"}})");
  const auto m = measure({});
  EXPECT_EQ(m.at("carbon_intensity").at("region"), "world");
  EXPECT_EQ(m.at("carbon_intensity").at("source"), "config " + config.string());
  EXPECT_EQ(m.at("cost").at("currency"), "USD");
}

TEST_F(FootprintTest, FlagBeatsEnvironmentBeatsConfigFile) {
  write_config(R"({"footprint": {"carbon_intensity": 100, "price": "0.10EUR"}})");
  EXPECT_EQ(measure({}).at("carbon_intensity").at("g_per_kwh"), 100);
  env_["WATTWISE_CARBON_INTENSITY"] = "200";
  auto m = measure({});
  EXPECT_EQ(m.at("carbon_intensity").at("g_per_kwh"), 200);
  EXPECT_EQ(m.at("cost").at("price_per_kwh"), 0.10);  // the file still gives what the environment does not
  m = measure({"--carbon-intensity", "300"});
  EXPECT_EQ(m.at("carbon_intensity").at("g_per_kwh"), 300);
  EXPECT_EQ(m.at("carbon_intensity").at("source"), "--carbon-intensity");
}

TEST_F(FootprintTest, BadValuesAreOneLineAndExitTwoBeforeTheJobRuns) {
  use_config(two_gpu_config());
  const auto ran = path("job-ran");
  const std::vector<std::vector<std::string>> bad_flags = {{"--carbon-intensity", "-5"},
                                                           {"--carbon-intensity", "Atlantis"},
                                                           {"--price", "cheap"},
                                                           {"--price", "-1EUR"},
                                                           {"--price", "0.30 euros"}};
  for (const auto& flags : bad_flags) {
    std::vector<std::string> args = {"measure"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "touch", ran.string()});
    const auto r = wattwise(args);
    EXPECT_EQ(r.exit_code, 2) << flags.at(1) << ": " << r.err;
    const std::string line = single_error_line(r);
    EXPECT_NE(line.find(flags.at(0)), std::string::npos) << line;  // names where the value came from
    EXPECT_FALSE(std::filesystem::exists(ran)) << flags.at(1);
  }
  env_["WATTWISE_PRICE"] = "lots";
  auto r = wattwise({"measure", "--", "touch", ran.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(single_error_line(r).find("WATTWISE_PRICE"), std::string::npos);
  env_.erase("WATTWISE_PRICE");
  const auto config = write_config("{\"footprint\": ");
  r = wattwise({"measure", "--", "touch", ran.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(single_error_line(r).find(config.string()), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(ran));
}

TEST_F(FootprintTest, AnalyzeStatesEachRecommendationsSavingPerRunAndPerHour) {
  // Reference 300 W: 36 kJ in 100 s; 200 W: 18 kJ in 120 s, the lowest energy. Saved 18 kJ = 0.005 kWh
  // per run, and the reference does 36 runs an hour: 0.18 kWh per hour of its work.
  std::ofstream(path("runs.csv"))
      << "power_limit_w,time_s,energy_j\n300,100,36000\n250,105,30000\n200,120,18000\n";
  auto r = wattwise({"analyze", path("runs.csv").string(), "--reference", "power_limit_w=300", "--json",
                     "--carbon-intensity", "500", "--price", "0.20EUR"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto a = nlohmann::json::parse(r.out);
  EXPECT_EQ(a.at("footprint").at("carbon_intensity").at("g_per_kwh"), 500);
  const nlohmann::json* energy = nullptr;
  for (const auto& rec : a.at("recommendations"))
    if (rec.at("metric") == "E") energy = &rec;
  ASSERT_NE(energy, nullptr) << r.out;
  ASSERT_EQ(energy->at("energy_j"), 18000) << energy->dump();
  const auto& saving = energy->at("saving");
  EXPECT_DOUBLE_EQ(saving.at("energy_kwh_per_run").get<double>(), 0.005);
  EXPECT_DOUBLE_EQ(saving.at("energy_kwh_per_hour").get<double>(), 0.18);
  EXPECT_DOUBLE_EQ(saving.at("co2e_g_per_hour").get<double>(), 90);
  EXPECT_NEAR(saving.at("cost_per_run").get<double>(), 0.001, 1e-12);

  r = wattwise({"analyze", path("runs.csv").string(), "--reference", "power_limit_w=300",
                "--carbon-intensity", "500"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Saved against the reference"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0.180 kWh"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("90.0 gCO2e"), std::string::npos) << r.out;
}

TEST_F(FootprintTest, SweepStatesTheSavingsAndRefusesABadRateBeforeItsFirstRun) {
  use_config(two_gpu_config());
  auto r = wattwise({"sweep", "--power-limit", "250,300", "--db", path("bad.db").string(), "--price",
                     "0.3 EURO", "--", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(single_error_line(r).find("--price"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path("bad.db")));  // nothing ran, nothing was set
  r = wattwise({"sweep", "--simulate", "v100:resnet50", "--power-limit", "200,300", "--samples", "5000",
                "--db", path("s.db").string(), "--carbon-intensity", "world"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Saved against the reference"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CO2e at 485.99 gCO2e/kWh: world, Ember 2022, from --carbon-intensity"),
            std::string::npos)
      << r.out;
}

TEST_F(FootprintTest, ReportTakesTheFlagsIntoItsFootprintBlock) {
  // The single-run report of a trace CSV (the sweep's block is tested in tests/report_html).
  const auto m = wattwise(
      {"measure", "--simulate", "v100:resnet50", "--epochs", "1", "--trace", path("trace.csv").string()});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto r = wattwise(
      {"report", path("trace.csv").string(), "-o", path("r.html").string(), "--carbon-intensity", "DE"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(path("r.html"));
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<section id=\"footprint\">"), std::string::npos);
  EXPECT_NE(html.find("DE, Ember 2023, from --carbon-intensity"), std::string::npos);
  EXPECT_NE(html.find("gCO2e"), std::string::npos);
}

}  // namespace
}  // namespace wattwise::e2e
