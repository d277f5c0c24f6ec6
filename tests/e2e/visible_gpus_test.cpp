// `wattwise measure` with CUDA_VISIBLE_DEVICES and no --gpus, on the two fake GPUs of two_gpu_config(): the
// job's GPUs are those the variable names; the others are left out or reported apart, never summed.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

class VisibleGpusTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    use_config(two_gpu_config());
  }

  ProcessResult measure(const std::string& visible, std::vector<std::string> extra = {}) {
    env_["CUDA_VISIBLE_DEVICES"] = visible;
    std::vector<std::string> args = {"measure", "--json", path("m.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    for (const std::string a : {"--", E2E_JOB, "sleep", "1200"}) args.push_back(a);
    return wattwise(args);
  }
};

TEST_F(VisibleGpusTest, AJobThatSeesOneOfTwoGpusGetsOnlyThatGpusEnergy) {
  const auto r = measure("1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("m.json");
  ASSERT_EQ(m.at("gpus").size(), 1u) << m.dump();
  EXPECT_EQ(m["gpus"][0].at("uuid"), "GPU-e2e-constant");
  EXPECT_TRUE(m["gpus"][0].at("used_by_job").get<bool>());
  const double expected_j = kConstantPowerW * m.at("wall_s").get<double>();  // the fake's exact integral
  EXPECT_NEAR(m.at("energy_j").get<double>(), expected_j, 0.01 * expected_j) << m.dump();
  EXPECT_EQ(m.at("job_gpus_from"), "CUDA_VISIBLE_DEVICES");
}

TEST_F(VisibleGpusTest, AUuidPrefixNamesTheGpuAsCudaReadsIt) {
  const auto r = measure("GPU-e2e-c");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("m.json");
  ASSERT_EQ(m.at("gpus").size(), 1u);
  EXPECT_EQ(m["gpus"][0].at("uuid"), "GPU-e2e-constant");
}

TEST_F(VisibleGpusTest, OtherGpusReportedAreShownApartAndNotSummed) {
  const auto r = measure("1", {"--other-gpus", "report"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("m.json");
  ASSERT_EQ(m.at("gpus").size(), 2u) << m.dump();
  EXPECT_EQ(m["gpus"][0].at("uuid"), "GPU-e2e-constant");  // the job's first
  EXPECT_TRUE(m["gpus"][0].at("used_by_job").get<bool>());
  EXPECT_EQ(m["gpus"][1].at("uuid"), "GPU-e2e-square");
  EXPECT_FALSE(m["gpus"][1].at("used_by_job").get<bool>());
  ASSERT_GT(m["gpus"][1].at("energy_j").get<double>(), 100.0);  // sampled: 100-500 W for > 1 s
  EXPECT_DOUBLE_EQ(m.at("energy_j").get<double>(), m["gpus"][0].at("energy_j").get<double>());
  EXPECT_NE(r.err.find("(idle)"), std::string::npos) << r.err;
  EXPECT_EQ(m.at("job_gpus_from"), "CUDA_VISIBLE_DEVICES");
}

TEST_F(VisibleGpusTest, AnExplicitGpusFlagWinsOverTheVariable) {
  const auto r = measure("1", {"--gpus", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("m.json");
  ASSERT_EQ(m.at("gpus").size(), 1u);
  EXPECT_EQ(m["gpus"][0].at("uuid"), "GPU-e2e-square");
  EXPECT_EQ(m.at("job_gpus_from"), "--gpus");
}

TEST_F(VisibleGpusTest, AVariableNamingNoGpuHereIsAUsageErrorBeforeTheJobRuns) {
  env_["CUDA_VISIBLE_DEVICES"] = "7";
  const auto r = wattwise({"measure", "--", E2E_JOB, "touch", path("ran").string()});
  EXPECT_EQ(r.exit_code, 2);
  const std::string line = single_error_line(r);
  EXPECT_NE(line.find("CUDA_VISIBLE_DEVICES='7'"), std::string::npos) << line;
  EXPECT_NE(line.find("GPU-e2e-square"), std::string::npos) << line;  // lists what is present
  EXPECT_FALSE(std::filesystem::exists(path("ran")));
}

TEST_F(VisibleGpusTest, AnEmptyVariableMeansNoGpuAndSaysSo) {
  env_["CUDA_VISIBLE_DEVICES"] = "";
  const auto r = wattwise({"measure", "--", E2E_JOB, "touch", path("ran").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(single_error_line(r).find("set but empty"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("ran")));
}

TEST_F(VisibleGpusTest, ABadLaterEntryIsAWarningAndTheEntriesBeforeItAreTheJobs) {
  const auto r = measure("1,9,0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("'9' names no GPU"), std::string::npos) << r.err;
  const auto m = read_json("m.json");
  ASSERT_EQ(m.at("gpus").size(), 1u);
  EXPECT_EQ(m["gpus"][0].at("uuid"), "GPU-e2e-constant");
}

TEST_F(VisibleGpusTest, AWrongOtherGpusValueIsAUsageError) {
  env_["CUDA_VISIBLE_DEVICES"] = "1";
  const auto r = wattwise({"measure", "--other-gpus", "some", "--", E2E_JOB, "touch", path("ran").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(single_error_line(r).find("--other-gpus"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("ran")));
}

}  // namespace
}  // namespace wattwise::e2e

namespace wattwise::e2e {
namespace {

// The fake lists, as GPU N's compute processes, the pids in gpuN.pids; the job writes its own pid into one.
class JobSeenOnGpusTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    config_ = two_gpu_config();
    for (int i = 0; i < 2; ++i) config_["gpus"][i]["compute_pids_file"] = path(pids_file(i)).string();
    use_config(config_);
  }
  static std::string pids_file(int gpu) { return "gpu" + std::to_string(gpu) + ".pids"; }
  ProcessResult measure_job_on(int gpu) {
    return wattwise({"measure", "--json", path("m.json").string(), "--", E2E_JOB, "pidfile",
                     path(pids_file(gpu)).string(), "1200"});
  }
  nlohmann::json config_;
};

TEST_F(JobSeenOnGpusTest, AJobOnTheGpuItWasGivenIsSeenThereWithoutWarnings) {
  env_["CUDA_VISIBLE_DEVICES"] = "1";
  const auto r = measure_job_on(1);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("m.json");
  ASSERT_EQ(m.at("gpu_usage").size(), 2u) << m.dump();  // every GPU of the node is asked
  const auto& gpu1 = m["gpu_usage"][1];
  EXPECT_TRUE(gpu1.at("expected").get<bool>());
  EXPECT_TRUE(gpu1.at("job_seen").get<bool>());
  ASSERT_EQ(gpu1.at("pids").size(), 1u);
  EXPECT_EQ(m["gpu_usage"][0].at("job_seen"), false);
  EXPECT_NE(r.err.find("job seen on   GPU 1\n"), std::string::npos) << r.err;
  // (The mixed-models line about CUDA_DEVICE_ORDER comes before the summary; the summary has no warning.)
  const std::string summary = r.err.substr(r.err.find(" Energy and time of"));
  EXPECT_EQ(summary.find("warning"), std::string::npos) << r.err;
}

TEST_F(JobSeenOnGpusTest, AJobOnAGpuItWasNotGivenIsReportedAndNotSummed) {
  env_["CUDA_VISIBLE_DEVICES"] = "1";
  const auto r = measure_job_on(0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("m.json");
  const auto& gpu0 = m["gpu_usage"][0];
  EXPECT_FALSE(gpu0.at("expected").get<bool>());
  EXPECT_FALSE(gpu0.at("measured").get<bool>());
  EXPECT_TRUE(gpu0.at("job_seen").get<bool>());
  EXPECT_EQ(m["gpu_usage"][1].at("job_seen"), false);
  EXPECT_NE(r.err.find("warning: the job ran on GPU 0 (GPU-e2e-square), not one of its GPUs "
                       "(CUDA_VISIBLE_DEVICES)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("warning: no process of the job was seen on GPU 1"), std::string::npos) << r.err;
  // Only the job's GPU is in its energy.
  ASSERT_EQ(m.at("gpus").size(), 1u);
  const double expected_j = kConstantPowerW * m.at("wall_s").get<double>();
  EXPECT_NEAR(m.at("energy_j").get<double>(), expected_j, 0.01 * expected_j);
}

TEST_F(JobSeenOnGpusTest, AStrayGpuReportedApartShowsItsEnergyOutsideTheTotal) {
  env_["CUDA_VISIBLE_DEVICES"] = "1";
  const auto r = wattwise({"measure", "--other-gpus", "report", "--json", path("m.json").string(), "--",
                           E2E_JOB, "pidfile", path("gpu0.pids").string(), "1200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("m.json");
  ASSERT_EQ(m.at("gpus").size(), 2u);
  EXPECT_FALSE(m["gpus"][1].at("used_by_job").get<bool>());
  EXPECT_GT(m["gpus"][1].at("energy_j").get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(m.at("energy_j").get<double>(), m["gpus"][0].at("energy_j").get<double>());
  EXPECT_NE(r.err.find("0 (not given; job seen)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("its energy is shown apart and is not in the total"), std::string::npos) << r.err;
}

TEST_F(JobSeenOnGpusTest, AGpuWhoseProcessesCannotBeListedIsUnknownNotWrong) {
  config_["gpus"][1]["unsupported"] = {"nvmlDeviceGetComputeRunningProcesses_v3"};
  use_config(config_);
  env_["CUDA_VISIBLE_DEVICES"] = "1";
  const auto r = measure_job_on(1);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("m.json");
  EXPECT_TRUE(m["gpu_usage"][1].at("job_seen").is_null()) << m.dump();
  EXPECT_EQ(r.err.find("no process of the job was seen"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot tell for GPU 1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace wattwise::e2e

namespace wattwise::e2e {
namespace {

std::vector<std::vector<std::string>> query(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  std::vector<std::vector<std::string>> rows;
  if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return rows;
  sqlite3_exec(
      handle, sql.c_str(),
      [](void* out, int n, char** values, char**) {
        std::vector<std::string> row;
        for (int i = 0; i < n; ++i) row.push_back(values[i] ? values[i] : "NULL");
        static_cast<std::vector<std::vector<std::string>>*>(out)->push_back(row);
        return 0;
      },
      &rows, nullptr);
  sqlite3_close(handle);
  return rows;
}

class VisibleGpusSweepTest : public VisibleGpusTest {};

TEST_F(VisibleGpusSweepTest, ASweepMeasuresTheJobsGpuAndStoresWhereTheJobWasSeen) {
  auto config = two_gpu_config();
  config["gpus"][1]["compute_pids_file"] = path("gpu1.pids").string();
  config["gpus"][0]["compute_pids_file"] = path("gpu0.pids").string();
  use_config(config);
  env_["CUDA_VISIBLE_DEVICES"] = "GPU-e2e-constant";
  env_["WATTWISE_STATE_DIR"] = path("state").string();
  const auto db = path("s.db");
  const auto r = wattwise({"sweep", "--param", "x=1", "--db", db.string(), "--", E2E_JOB, "pidfile",
                           path("gpu1.pids").string(), "600"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(query(db, "SELECT gpu_index FROM gpus"), (std::vector<std::vector<std::string>>{{"1"}}));
  EXPECT_EQ(query(db, "SELECT gpu_index FROM run_gpu_energy"),
            (std::vector<std::vector<std::string>>{{"1"}}));
  const auto usage =
      query(db, "SELECT gpu_index, expected, measured, job_seen FROM run_gpu_usage ORDER BY 1");
  EXPECT_EQ(usage, (std::vector<std::vector<std::string>>{{"0", "0", "0", "0"}, {"1", "1", "1", "1"}}));
  EXPECT_EQ(query(db, "SELECT value FROM meta WHERE key = 'schema_version'"),
            (std::vector<std::vector<std::string>>{{"9"}}));  // kResultsSchemaVersion
}

}  // namespace
}  // namespace wattwise::e2e
