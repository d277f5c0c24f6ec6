// `wattwise info` against two fake GPUs: identity, limits and unsupported readings, as text and JSON.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

// The output line that contains every one of the fragments, or "" when none does.
std::string line_with(const std::string& text, const std::vector<std::string>& fragments) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    bool all = true;
    for (const auto& f : fragments) all = all && line.find(f) != std::string::npos;
    if (all) return line;
  }
  return "";
}

using InfoTest = E2eTest;

TEST_F(InfoTest, TableListsBothGpusWithNamesUuidsAndLimits) {
  use_config(two_gpu_config());
  const auto r = wattwise({"info"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Each GPU's row pairs its name with its own min / default / current / max, so a swap would show.
  EXPECT_NE(line_with(r.out, {"NVIDIA H100 80GB HBM3", "200 / 700 / 600 / 700 W"}), "") << r.out;
  EXPECT_NE(line_with(r.out, {"NVIDIA H100 PCIe", "150 / 310 / 320 / 350 W"}), "") << r.out;
  EXPECT_NE(line_with(r.out, {"GPU 0", "GPU-e2e-square", "00000000:19:00.0"}), "") << r.out;
  EXPECT_NE(line_with(r.out, {"GPU 1", "GPU-e2e-constant", "00000000:3B:00.0"}), "") << r.out;
  EXPECT_NE(line_with(r.out, {"GPUs 2"}), "") << r.out;
  EXPECT_NE(line_with(r.out, {"driver 580.159.04"}), "") << r.out;
}

// Before: exit 3 on the lost GPU's first call and nothing listed, the healthy GPU included.
TEST_F(InfoTest, ALostGpuIsNamedOnStderrAndTheHealthyOneIsStillListed) {
  auto config = two_gpu_config();
  config["gpus"][1]["lost_after_s"] = 0.0;
  use_config(config);
  const auto r = wattwise({"info"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(line_with(r.out, {"NVIDIA H100 80GB HBM3", "200 / 700 / 600 / 700 W"}), "") << r.out;
  EXPECT_NE(line_with(r.out, {"unreadable"}), "") << r.out;
  EXPECT_NE(r.err.find("GPU is lost"), std::string::npos) << r.err;
  const auto j = wattwise({"info", "--json"});
  EXPECT_EQ(j.exit_code, 3) << j.err;
  const auto parsed = nlohmann::json::parse(j.out);
  ASSERT_EQ(parsed.at("gpus").size(), 2u);
  EXPECT_EQ(parsed.at("gpus")[0].at("name"), "NVIDIA H100 80GB HBM3");
  EXPECT_NE(parsed.at("gpus")[1].at("error").get<std::string>().find("lost"), std::string::npos);
}

TEST_F(InfoTest, JsonParsesAndCarriesIdentityAndLimits) {
  use_config(two_gpu_config());
  const auto r = wattwise({"info", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // stdout is pure JSON: no decoration around it
  EXPECT_EQ(j.at("tool"), "wattwise");
  EXPECT_EQ(j.at("backend"), "nvml");
  EXPECT_EQ(j.at("driver_version"), "580.159.04");
  ASSERT_EQ(j.at("gpus").size(), 2u);
  const auto& g0 = j["gpus"][0];
  const auto& g1 = j["gpus"][1];
  EXPECT_EQ(g0.at("index"), 0);
  EXPECT_EQ(g0.at("uuid"), "GPU-e2e-square");
  EXPECT_EQ(g0.at("name"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g0.at("pci_bus_id"), "00000000:19:00.0");
  EXPECT_DOUBLE_EQ(g0.at("power_limit_w").at("min"), 200);
  EXPECT_DOUBLE_EQ(g0.at("power_limit_w").at("default"), 700);
  EXPECT_DOUBLE_EQ(g0.at("power_limit_w").at("current"), 600);
  EXPECT_DOUBLE_EQ(g0.at("power_limit_w").at("max"), 700);
  EXPECT_EQ(g1.at("index"), 1);
  EXPECT_EQ(g1.at("uuid"), "GPU-e2e-constant");
  EXPECT_EQ(g1.at("name"), "NVIDIA H100 PCIe");
  EXPECT_DOUBLE_EQ(g1.at("power_limit_w").at("min"), 150);
  EXPECT_DOUBLE_EQ(g1.at("power_limit_w").at("default"), 310);
  EXPECT_DOUBLE_EQ(g1.at("power_limit_w").at("current"), 320);
  EXPECT_DOUBLE_EQ(g1.at("power_limit_w").at("max"), 350);
  EXPECT_TRUE(g0.at("readings").at("energy_counter").get<bool>());
  EXPECT_TRUE(g0.at("readings").at("power_samples").get<bool>());
}

TEST_F(InfoTest, UnsupportedReadingsShowAsNotAvailableNeverZero) {
  auto config = two_gpu_config();
  config["gpus"][1]["unsupported"] = {"nvmlDeviceGetPowerManagementLimit", "nvmlDeviceGetTemperature"};
  use_config(config);

  const auto text = wattwise({"info"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::string row = line_with(text.out, {"NVIDIA H100 PCIe"});
  ASSERT_NE(row, "") << text.out;
  EXPECT_NE(row.find("n/a"), std::string::npos) << row;
  EXPECT_EQ(row.find("0 / 0"), std::string::npos) << row;
  EXPECT_EQ(row.find(" 0 W"), std::string::npos) << row;
  // The supported GPU still shows its limits.
  EXPECT_NE(line_with(text.out, {"NVIDIA H100 80GB HBM3", "200 / 700 / 600 / 700 W"}), "") << text.out;
  // GPU 1's section names the missing reading; GPU 0's does not.
  const auto gpu1_section = text.out.substr(text.out.find("GPU 1  GPU-e2e-constant"));
  EXPECT_NE(line_with(gpu1_section, {"not available", "temperature"}), "") << text.out;
  const auto gpu0_section = text.out.substr(0, text.out.find("GPU 1  GPU-e2e-constant"));
  EXPECT_EQ(line_with(gpu0_section, {"not available", "temperature"}), "") << text.out;

  const auto json = wattwise({"info", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_TRUE(j["gpus"][1].at("power_limit_w").is_null()) << j["gpus"][1].dump();
  EXPECT_FALSE(j["gpus"][1].at("readings").at("temperature").get<bool>());
  EXPECT_FALSE(j["gpus"][1].at("controls").at("power_limit_read").get<bool>());
  EXPECT_TRUE(j["gpus"][0].at("readings").at("temperature").get<bool>());
  EXPECT_DOUBLE_EQ(j["gpus"][0].at("power_limit_w").at("current"), 600);
}

// Before: "may change settings: yes" for root whatever the driver would answer, though in a container or
// under an administrator's setting it refuses every set call. Without asking, the answer is not known.
TEST_F(InfoTest, NeverSaysSettingsMayChangeWhenTheDriverRefusesEverySetCall) {
  auto config = two_gpu_config();
  config["controls_error"] = "NO_PERMISSION";
  use_config(config);
  env_["WATTWISE_STATE_DIR"] = path("state").string();

  const auto text = wattwise({"info"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(line_with(text.out, {"may change settings: yes"}), "") << text.out;
  const std::string expected =
      geteuid() == 0 ? "may change settings: unknown until tried" : "may change settings: no";
  EXPECT_NE(line_with(text.out, {expected}), "") << text.out;
  const auto json = nlohmann::json::parse(wattwise({"info", "--json"}).out);
  for (const auto& gpu : json.at("gpus")) EXPECT_NE(gpu.at("may_change_settings"), true) << gpu.dump();

  // --probe asks the driver (setting each limit to its own value) and says what it answered.
  const auto probed = wattwise({"info", "--probe"});
  ASSERT_EQ(probed.exit_code, 0) << probed.err;
  EXPECT_EQ(line_with(probed.out, {"may change settings: yes"}), "") << probed.out;
  EXPECT_NE(line_with(probed.out, {"GPU"}), "");
  std::istringstream lines(probed.out);
  int refusals = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.find("may change settings: no") != std::string::npos) ++refusals;
  EXPECT_EQ(refusals, 2) << probed.out;
  const auto probed_json = nlohmann::json::parse(wattwise({"info", "--probe", "--json"}).out);
  for (const auto& gpu : probed_json.at("gpus"))
    EXPECT_EQ(gpu.at("may_change_settings"), false) << gpu.dump();
}

TEST_F(InfoTest, ProbeSaysYesWhenTheDriverAcceptsAndChangesNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "the NVML setting calls are root's";
  use_config(two_gpu_config());
  env_["WATTWISE_STATE_DIR"] = path("state").string();
  const auto probed = nlohmann::json::parse(wattwise({"info", "--probe", "--json"}).out);
  for (const auto& gpu : probed.at("gpus")) EXPECT_EQ(gpu.at("may_change_settings"), true) << gpu.dump();
  const auto after = nlohmann::json::parse(wattwise({"info", "--json"}).out);
  EXPECT_DOUBLE_EQ(after["gpus"][0]["power_limit_w"]["current"], 600);
  EXPECT_DOUBLE_EQ(after["gpus"][1]["power_limit_w"]["current"], 320);
}

// Issue 15: `info` shows what each GPU reads now (as nvidia-smi does), for people and programs.
TEST_F(InfoTest, LiveReadingsShowEachGpusOwnPowerAndTemperature) {
  use_config(two_gpu_config());
  const auto r = wattwise({"info"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // GPU 1 draws a constant 300 W at 45 °C (the fake's telemetry); GPU 0's square wave has no fixed level.
  EXPECT_NE(line_with(r.out, {"1  ", "300.0 W", "45 °C", "MHz"}), "") << r.out;
  EXPECT_NE(line_with(r.out, {"energy since driver load"}), "") << r.out;
}

TEST_F(InfoTest, CsvHasOneRowPerGpuWithTheHeaderItsDocumentNames) {
  use_config(two_gpu_config());
  const auto r = wattwise({"info", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    rows.push_back(fields);
  }
  ASSERT_EQ(rows.size(), 3u) << r.out;
  const auto column = [&](const std::string& name) {
    const auto it = std::find(rows[0].begin(), rows[0].end(), name);
    EXPECT_NE(it, rows[0].end()) << name;
    return static_cast<std::size_t>(it - rows[0].begin());
  };
  EXPECT_EQ(rows[1].at(column("uuid")), "GPU-e2e-square");
  EXPECT_EQ(rows[2].at(column("uuid")), "GPU-e2e-constant");
  EXPECT_DOUBLE_EQ(std::stod(rows[2].at(column("power_w"))), 300.0);
  EXPECT_DOUBLE_EQ(std::stod(rows[2].at(column("power_limit_w"))), 320.0);
  EXPECT_GT(std::stod(rows[2].at(column("energy_j"))), 0.0);
  for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size()) << r.out;
}

TEST_F(InfoTest, JsonNowHasLiveReadingsAndAnUnsupportedOneIsNull) {
  auto config = two_gpu_config();
  config["gpus"][1]["unsupported"] = {"nvmlDeviceGetTemperature"};
  use_config(config);
  const auto r = wattwise({"info", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["gpus"][1].at("now").at("power_w").get<double>(), 300.0);
  EXPECT_TRUE(j["gpus"][1].at("now").at("temp_c").is_null());
  EXPECT_TRUE(j["gpus"][0].at("now").at("temp_c").is_number());
  EXPECT_EQ(wattwise({"info", "--format", "xml"}).exit_code, 2);
}

}  // namespace
}  // namespace wattwise::e2e
