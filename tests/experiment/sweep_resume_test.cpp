// The sweep's resume format (experiment/sweep_resume.hpp): what `sweep --resume --db X` alone reads back.
#include "experiment/sweep_resume.hpp"

#include <gtest/gtest.h>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "plan/plan.hpp"
#include "store/results_store.hpp"

namespace wattwise::experiment {
namespace {

using wattwise::testing::TempDir;

StoredSweepOptions every_option() {
  StoredSweepOptions o;
  o.gpus = "0,1";
  o.other_gpus = "report";
  o.timeout_s = "90";
  o.trace_dir = "/abs/traces";
  o.job_gpus = "{gpus}";
  o.energy_scope = "job";
  o.max_failures = 7;
  o.read_only = true;
  o.simulate = "v100:resnet50";
  o.slurm = true;
  o.srun_args = {"--gpus-per-node=4"};
  o.meter_cmd = "meter --joules";
  o.meter_timeout_s = "2";
  o.node_interval_ms = "500";
  o.no_powercap = true;
  o.adaptive = StoredSweepOptions::Adaptive{"40", "5W", {"E", "EDP"}};
  o.nvtx_domains = "all";
  o.interval_ms = "50";
  o.cooldown = "";
  o.sim = StoredSweepOptions::Simulation{4, 2, 128, 1000, 8};
  return o;
}

TEST(SweepResumeFormat, EveryOptionComesBackAsGiven) {
  const StoredSweepOptions o = sweep_options_from_json(sweep_options_json(every_option()));
  EXPECT_EQ(o.gpus, "0,1");
  EXPECT_EQ(o.other_gpus, "report");
  EXPECT_EQ(o.timeout_s, "90");
  EXPECT_EQ(o.trace_dir, "/abs/traces");
  EXPECT_EQ(o.job_gpus, "{gpus}");
  EXPECT_EQ(o.energy_scope, "job");
  EXPECT_EQ(o.max_failures, 7u);
  EXPECT_TRUE(o.read_only);
  EXPECT_EQ(o.simulate, "v100:resnet50");
  EXPECT_TRUE(o.slurm);
  EXPECT_EQ(o.srun_args, std::vector<std::string>{"--gpus-per-node=4"});
  EXPECT_EQ(o.meter_cmd, "meter --joules");
  EXPECT_EQ(o.meter_timeout_s, "2");
  EXPECT_EQ(o.node_interval_ms, "500");
  EXPECT_TRUE(o.no_powercap);
  ASSERT_TRUE(o.adaptive);
  EXPECT_EQ(o.adaptive->budget, "40");
  EXPECT_EQ(o.adaptive->precision, "5W");
  EXPECT_EQ(o.adaptive->metrics, (std::vector<std::string>{"E", "EDP"}));
  EXPECT_EQ(o.nvtx_domains, "all");
  EXPECT_EQ(o.interval_ms, "50");
  EXPECT_EQ(o.cooldown, "");  // given without a value: the default maximum, not "no cool-down"
  ASSERT_TRUE(o.sim);
  EXPECT_EQ(o.sim->gpus, 4u);
  EXPECT_EQ(o.sim->epochs, 2);
  EXPECT_EQ(o.sim->batch, 128u);
  EXPECT_EQ(o.sim->samples_per_epoch, 1000);
  EXPECT_EQ(o.sim->iteration_markers_per_epoch, 8);
}

TEST(SweepResumeFormat, WhatWasNotGivenIsNotWrittenAndReadsAsNotGiven) {
  const nlohmann::json json = sweep_options_json(StoredSweepOptions{});
  // The keys docs/results-schema.md names, null where the flag was not given.
  EXPECT_TRUE(json.at("gpus").is_null());
  EXPECT_TRUE(json.at("timeout_s").is_null());
  EXPECT_TRUE(json.at("energy_scope").is_null());
  EXPECT_TRUE(json.at("meter_cmd").is_null());
  for (const char* absent : {"slurm", "srun_args", "adaptive", "nvtx", "interval_ms", "cooldown", "sim"})
    EXPECT_FALSE(json.contains(absent)) << absent;
  const StoredSweepOptions o = sweep_options_from_json(json);
  EXPECT_FALSE(o.gpus);
  EXPECT_EQ(o.other_gpus, "omit");
  EXPECT_EQ(o.max_failures, 3u);
  EXPECT_FALSE(o.adaptive);
  EXPECT_FALSE(o.nvtx_domains);
  EXPECT_FALSE(o.interval_ms);
  EXPECT_FALSE(o.cooldown);
  EXPECT_FALSE(o.sim);
}

TEST(SweepResumeFormat, NumbersOfOlderStoresAreReadAsTheTextOfTheFlag) {
  const auto o = sweep_options_from_json(
      nlohmann::json::parse(R"({"gpus": null, "timeout_s": 0, "job_gpus": "", "interval_ms": 20,
                                "max_failures": 3, "read_only": false, "simulate": "", "trace_dir": ""})"));
  EXPECT_FALSE(o.gpus);
  EXPECT_EQ(o.timeout_s, "0");  // and --timeout's parser refuses it again, as it would the flag
  EXPECT_EQ(o.job_gpus, "");
  EXPECT_EQ(o.interval_ms, "20");
  EXPECT_FALSE(o.energy_scope);  // before schema 6
  EXPECT_FALSE(o.meter_cmd);     // before schema 3
}

struct StoredSweepTest : ::testing::Test {
  std::filesystem::path db() const { return dir / "sweep.db"; }
  void create(const nlohmann::json& options) {
    plan::PlanSpec spec;
    spec.knobs.push_back(plan::parse_job_knob("batch=64,128"));
    spec.seed = 42;
    store::ResultsStore::create(
        db(), {"train --batch {batch}", "counter", "node1", {"train", "--batch", "{batch}"}, options},
        plan::plan_spec_to_json(spec), {{0, "GPU-aaa", "H100", 200.0, 700.0, 700.0}});
  }
  TempDir dir;
};

TEST_F(StoredSweepTest, TheStoredPlanCommandAndOptionsComeBack) {
  create(sweep_options_json(every_option()));
  const StoredSweep sweep = load_stored_sweep(db());
  EXPECT_EQ(sweep.command, (std::vector<std::string>{"train", "--batch", "{batch}"}));
  EXPECT_EQ(plan::plan_spec_from_json(sweep.plan).seed, 42u);
  EXPECT_EQ(sweep.options.gpus, "0,1");
  EXPECT_EQ(sweep.options.max_failures, 7u);
}

TEST_F(StoredSweepTest, ADatabaseWithoutStoredOptionsAsksForTheKnobsAndTheCommand) {
  create(nullptr);  // stored as {}: what a wattwise before schema 2 left
  try {
    load_stored_sweep(db());
    FAIL() << "loaded a sweep with no stored options";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("give the knobs and the command again with --resume"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(StoredSweepTest, OptionsOfTheWrongTypeAreOneDataErrorNamingTheDatabase) {
  create(nlohmann::json{{"gpus", nullptr}, {"cooldown", 60}, {"max_failures", 3}});
  try {
    load_stored_sweep(db());
    FAIL() << "loaded a cool-down stored as a number";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(std::string(e.what()).find(db().string() + ": the stored sweep options are not readable"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace wattwise::experiment
