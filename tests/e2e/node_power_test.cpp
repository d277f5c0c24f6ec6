// Node power beside the GPUs with the real binary: a fake powercap tree (WATTWISE_POWERCAP_ROOT) and fake
// meters (tests/hw/meters), on the fake NVML.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

namespace fs = std::filesystem;

constexpr double kJobS = 1.5;
constexpr std::uint64_t kRangeUj = 100'000'000;  // 100 J: small, so that the job makes the counter wrap

std::string meter(const std::string& name) {
  return std::string(E2E_METERS_DIR) + "/" + name;
}

class NodePowerTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    use_config(two_gpu_config());
    root_ = path("powercap");
    package_ = zone("intel-rapl:0", "package-0", 90'000'000);
    dram_ = zone("intel-rapl:0:0", "dram", 10'000'000);
    env_["WATTWISE_POWERCAP_ROOT"] = root_.string();
  }

  fs::path zone(const std::string& id, const std::string& name, std::uint64_t energy_uj) {
    const fs::path dir = root_ / id;
    fs::create_directories(dir);
    std::ofstream(dir / "name") << name << "\n";
    std::ofstream(dir / "energy_uj") << energy_uj << "\n";
    std::ofstream(dir / "max_energy_range_uj") << kRangeUj << "\n";
    return dir;
  }

  // A job that draws 50 J from the package (through a wrap: 90 J -> 100 J -> 40 J) and 10 J from DRAM in
  // its middle: readings before and after the step lie inside the job, so the job gets the whole step.
  std::vector<std::string> job() const {
    return {"/bin/sh", "-c",
            "sleep " + std::to_string(kJobS / 3) + "; echo 40000000 > " + (package_ / "energy_uj").string() +
                "; echo 20000000 > " + (dram_ / "energy_uj").string() + "; sleep " +
                std::to_string(2 * kJobS / 3)};
  }

  ProcessResult measure(std::vector<std::string> flags) {
    std::vector<std::string> args = {"measure", "--json", path("m.json").string(), "--node-interval", "200"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back("--");
    for (const auto& a : job()) args.push_back(a);
    return wattwise(args);
  }

  const nlohmann::json& source(const nlohmann::json& m, const std::string& name) {
    for (const auto& s : m.at("node").at("sources"))
      if (s.at("name") == name) return s;
    throw std::runtime_error("no node source " + name + " in " + m.at("node").dump());
  }

  fs::path root_, package_, dram_;
};

TEST_F(NodePowerTest, CpuDramAndWattsMeterAreMeasuredAndSummed) {
  const auto r = measure({"--meter-cmd", meter("watts.sh")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("m.json");
  const auto& node = m.at("node");
  // Exact: the step lies between readings inside the job. (It came out 15-20% low in 1 run of 6 while
  // the job's clean-up took the meter command for a leftover of the job and reaped it, which stalled the
  // node thread; core/own_children.hpp.)
  EXPECT_NEAR(node.at("cpu_package_j").get<double>(), 50, 1e-6) << node.dump();
  EXPECT_NEAR(node.at("dram_j").get<double>(), 10, 1e-6) << node.dump();
  EXPECT_EQ(source(m, "package-0").at("origin"), "powercap intel-rapl:0 energy_uj");
  EXPECT_EQ(source(m, "dram-0").at("kind"), "dram");
  // A constant 250 W meter integrates to 250 W x the job's wall time.
  const double wall_s = m.at("wall_s");
  EXPECT_NEAR(node.at("meter_j").get<double>(), 250 * wall_s, 0.01 * 250 * wall_s);
  double gpus_j = 0;
  for (const auto& g : m.at("gpus")) gpus_j += g.at("energy_j").get<double>();
  EXPECT_NEAR(node.at("sum_j").get<double>(),
              gpus_j + node.at("cpu_package_j").get<double>() + node.at("dram_j").get<double>(), 1e-6);
  EXPECT_EQ(node.at("sum_parts"), nlohmann::json({"gpus", "cpu_package", "dram"}));
  // The summary for people names the sources and the totals.
  EXPECT_NE(r.err.find("node power, read every"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPUs+CPU+DRAM"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("meter `"), std::string::npos) << r.err;
}

TEST_F(NodePowerTest, JoulesMeterIsDifferenced) {
  env_["METER_STATE"] = path("meter-state").string();
  const auto r = measure({"--no-powercap", "--meter-cmd", meter("joules.sh")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("m.json");
  const auto& meter_source = source(m, "meter");
  const double readings = meter_source.at("readings");
  ASSERT_GE(readings, 3) << m.at("node").dump();
  // 100 J a run of the meter, counted in its state file (a run killed at the stop may have counted too):
  // the job's window lies inside the first and the last reading, 100 J after the first run.
  double runs = 0;
  std::ifstream(path("meter-state")) >> runs;
  const double meter_j = m.at("node").at("meter_j");
  EXPECT_GT(meter_j, 0);
  EXPECT_LE(meter_j, runs - 100 + 1e-9);
  EXPECT_TRUE(m.at("node").at("cpu_package_j").is_null());  // --no-powercap
}

TEST_F(NodePowerTest, HangingMeterWarnsOnceAndTheJobIsMeasuredOn) {
  const auto r = measure({"--meter-cmd", meter("hangs.sh"), "--meter-timeout", "0.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto first = r.err.find("the meter failed");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("the meter failed", first + 1), std::string::npos) << r.err;  // said once
  EXPECT_NE(r.err.find("given up after 3 in a row"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
  EXPECT_LT(r.wall_s, kJobS + 3);  // not hung on the meter's 60 s sleep
  const auto m = read_json("m.json");
  EXPECT_TRUE(m.at("node").at("meter_j").is_null());
  EXPECT_TRUE(m.at("node").at("cpu_package_j").is_number());  // the other sources are unharmed
  EXPECT_TRUE(m.at("energy_j").is_number());
}

TEST_F(NodePowerTest, GarbageMeterWarnsWithWhatItPrinted) {
  const auto r = measure({"--meter-cmd", meter("garbage.sh")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("Instantaneous power reading: lots"), std::string::npos) << r.err;
  EXPECT_TRUE(read_json("m.json").at("node").at("meter_j").is_null());
}

TEST_F(NodePowerTest, MissingMeterProgramIsAUsageErrorBeforeTheJob) {
  const auto r = measure({"--meter-cmd", path("no-such-meter").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(single_error_line(r).find("--meter-cmd"), std::string::npos);
  EXPECT_EQ(std::ifstream(package_ / "energy_uj").rdbuf()->sgetc(), '9');  // the job did not run
}

TEST_F(NodePowerTest, MeterTimeoutOutOfRangeIsAUsageError) {
  const auto r = measure({"--meter-cmd", meter("watts.sh"), "--meter-timeout", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(single_error_line(r).find("--meter-timeout"), std::string::npos);
}

TEST_F(NodePowerTest, NoPowercapAndNoMeterMeansNoNodeObject) {
  const auto r = measure({"--no-powercap"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(read_json("m.json").at("node").is_null());
}

TEST_F(NodePowerTest, SweepStoresNodeEnergyPerRunAndTheMeterForResume) {
  const std::string db = path("sweep.db").string();
  std::vector<std::string> args = {
      "sweep",           "--db", db,  "--param", "x=1,2", "--meter-cmd", meter("watts.sh"),
      "--node-interval", "200",  "--"};
  for (const auto& a : job()) args.push_back(a);
  const auto r = wattwise(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = run({"/usr/bin/sqlite3", db,
                         "SELECT count(*) FROM run_node_energy WHERE source = 'meter' AND energy_j > 0; "
                         "SELECT value FROM meta WHERE key = 'schema_version'; "
                         "SELECT json_extract(value, '$.meter_cmd') FROM meta WHERE key = 'sweep_json';"});
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  EXPECT_EQ(rows.out, "2\n9\n" + meter("watts.sh") + "\n");  // 9: kResultsSchemaVersion
}

}  // namespace
}  // namespace wattwise::e2e
