// Every bad value is refused before anything runs or any setting changes: exit 2, one line on stderr, no
// job started, no database written, and the fake GPUs' settings untouched (the fake driver writes its state
// file only when a setting is changed, so its absence proves no set call reached it).
#include <gtest/gtest.h>

#include <fstream>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

constexpr int kUsage = 2;

class BadInputTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    use_config(two_gpu_config());
    env_["WATTWISE_STATE_DIR"] = path("state").string();
  }

  std::vector<std::string> touch_job() const { return {E2E_JOB, "touch", path("job-ran").string()}; }

  std::vector<std::string> measure(std::vector<std::string> flags) const {
    flags.insert(flags.begin(), "measure");
    flags.push_back("--");
    for (const auto& arg : touch_job()) flags.push_back(arg);
    return flags;
  }
  // A sweep that would change the power limit of both GPUs if it got that far.
  std::vector<std::string> sweep(std::vector<std::string> flags, bool with_limit = true) const {
    flags.insert(flags.begin(), {"sweep", "--db", path("sweep.db").string()});
    if (with_limit) flags.insert(flags.end(), {"--power-limit", "300"});
    flags.push_back("--");
    for (const auto& arg : touch_job()) flags.push_back(arg);
    return flags;
  }

  // The case was refused as it must be; `expected` is a fragment of the one line.
  void expect_refused(const std::vector<std::string>& args, const std::string& expected) {
    std::string shown;
    for (const auto& a : args) shown += "'" + a + "' ";
    const auto r = wattwise(args);
    EXPECT_EQ(r.exit_code, kUsage) << shown << "\n" << r.err;
    const auto line = single_error_line(r);
    EXPECT_NE(line.find(expected), std::string::npos) << shown << "\n" << line;
    EXPECT_EQ(line.find("internal error"), std::string::npos) << shown << "\n" << line;
    EXPECT_FALSE(std::filesystem::exists(path("job-ran"))) << shown;
    EXPECT_FALSE(std::filesystem::exists(path("sweep.db"))) << shown;
    EXPECT_FALSE(std::filesystem::exists(path("fake_nvml.json.state"))) << shown << ": a setting changed";
    std::filesystem::remove(path("job-ran"));
  }
};

TEST_F(BadInputTest, AnUnknownSubcommandIsNamedWithTheChoices) {
  expect_refused({"frobnicate", "--", E2E_JOB, "touch", path("job-ran").string()},
                 "unknown subcommand 'frobnicate': choose one of info, measure");
  expect_refused({}, "a subcommand is needed: one of info, measure");
}

// Options end at the job's command (first_contact_test.cpp: the job's own flags after it are the job's); an
// unknown option before it is still refused.
TEST_F(BadInputTest, AnUnknownOptionBeforeTheJobsCommandIsRefused) {
  expect_refused({"measure", "--frobnicate", E2E_JOB, "touch", path("job-ran").string()}, "--frobnicate");
  expect_refused({"sweep", "--power-limit", "300", "-x", E2E_JOB, "touch", path("job-ran").string()}, "-x");
}

TEST_F(BadInputTest, DurationsThatAreNotFiniteNumbersInRangeAreRefused) {
  for (const char* bad : {"abc", "nan", "inf", "1e300", "-1", "0", ""}) {
    expect_refused(measure({"--timeout", bad}), "--timeout");
    expect_refused(sweep({"--timeout", bad}), "--timeout");
  }
  // "": issue 22, item 11 (it ran with the default 60 s).
  for (const char* bad : {"abc", "nan", "-5", "1e300", ""})
    expect_refused(sweep({"--cooldown", bad}), "--cooldown");
  for (const char* bad : {"0", "nan", "-1", "1e9"}) {
    expect_refused(measure({"--interval", bad}), "--interval");
    expect_refused(sweep({"--interval", bad}), "--interval");
  }
  expect_refused(measure({"--counter-interval", "0"}), "--counter-interval");
}

TEST_F(BadInputTest, ACounterPostingsOutOfRangeOrBesideAFixedIntervalIsRefusedBeforeTheJobRuns) {
  // 1 to 20 postings between reads: the samples' 2.4 s buffer bounds the gap the reconciliation can span.
  for (const char* bad : {"0", "21", "abc", "-1", "2.5", ""})
    expect_refused(measure({"--counter-postings", bad}), "--counter-postings");
  expect_refused(measure({"--counter-postings", "5", "--counter-interval", "100"}), "--counter-");
}

TEST_F(BadInputTest, APcieIntervalUnderASecondIsRefusedBeforeTheJobRuns) {
  // Each PCIe read blocks sampling ~42 ms on an H100: more often than once a second is refused.
  for (const char* bad : {"500", "0", "abc", "-1000"})
    expect_refused(measure({"--pcie-interval", bad}), "--pcie-interval");
}

TEST_F(BadInputTest, EmptyKnobsAndGpuListsAreRefused) {
  expect_refused(sweep({"--power-limit", ""}, false), "--power-limit");
  expect_refused(sweep({"--sm-clock", ""}, false), "--sm-clock");
  expect_refused(measure({"--gpus", ""}), "--gpus");
  expect_refused(sweep({"--gpus", ""}), "--gpus");
}

TEST_F(BadInputTest, JobGpusBeyondTheMeasuredGpusAreRefused) {
  for (const char* bad : {"99", "0", "-1", "3", "x", ""}) {
    expect_refused(measure({"--job-gpus", bad}), "--job-gpus");
    expect_refused(sweep({"--job-gpus", bad}), "--job-gpus");
  }
  expect_refused(measure({"--gpus", "0", "--job-gpus", "2"}), "from 1 to 1");
  // Through a job knob: the value of every run is checked before the first.
  expect_refused(sweep({"--param", "g=1,3", "--job-gpus", "{g}"}), "'3'");
}

TEST_F(BadInputTest, ClocksOutsideTheGpusSupportedRangeAreRefused) {
  // The fake GPUs support SM clocks 345..1980 MHz and memory clocks 1593..2619 MHz.
  expect_refused(sweep({"--sm-clock", "5000"}, false), "345-1980");
  expect_refused(sweep({"--mem-clock", "9000"}, false), "1593-2619");
  expect_refused(sweep({"--sm-clock", "1e20"}, false), "--sm-clock");
}

TEST_F(BadInputTest, PlaceholderThatIsNoKnobIsRefusedNamingTheKnobs) {
  auto args = sweep({"--param", "batch=1,2"});
  args.push_back("--bs={bs}");
  expect_refused(args, "knobs: power_limit_w, batch");
  expect_refused(sweep({"--job-gpus", "{gpus}"}), "{gpus}");
}

TEST_F(BadInputTest, ReferenceOutsideThePlanAndWordKnobsAreRefusedBeforeTheRuns) {
  expect_refused(sweep({"--power-limit", "300,350", "--reference", "power_limit_w=999"}, false),
                 "power_limit_w takes 300, 350");
  expect_refused(sweep({"--reference", "batch=1"}), "batch");
  expect_refused(sweep({"--param", "model=resnet50,bert"}), "model");
}

TEST_F(BadInputTest, OutputPathsAreCheckedBeforeTheJob) {
  std::filesystem::create_directories(path("out"));
  expect_refused(measure({"--json", path("out").string()}), "is a directory");
  expect_refused(measure({"--trace", path("out").string()}), "is a directory");
  std::ofstream(path("a-file")) << "x";
  expect_refused(sweep({"--trace-dir", path("a-file").string()}), "not a directory");
}

TEST_F(BadInputTest, DirectoryGivenAsInputSaysSo) {
  std::filesystem::create_directories(path("in"));
  expect_refused({"analyze", path("in").string()}, "is a directory");
  expect_refused({"report", path("in").string(), "--format", "md"}, "is a directory");
  expect_refused({"report", path("in").string(), "-o", path("in").string()}, "is a directory");
}

// What the rules let through still works: {{name}} reaches the job as the literal {name}, next to a value.
TEST_F(BadInputTest, DoubledBracesReachTheJobAsALiteralPlaceholder) {
  const auto r = wattwise({"sweep", "--db", path("ok.db").string(), "--param", "b=1", "--timeout", "30", "--",
                           E2E_JOB, "touch", path("{{x}}-{b}").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(path("{x}-1")));
}

}  // namespace
}  // namespace wattwise::e2e
