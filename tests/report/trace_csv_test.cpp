// The trace CSV of one GPU (what a sweep stores per GPU): the whole trace's file with the other GPUs' rows
// left out, written so rather than cut out of the whole file's text.
#include "report/trace_csv.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "report/trace_replay.hpp"
#include "sampling/energy_accounting.hpp"

namespace wattwise::report {
namespace {

using namespace std::chrono_literals;

// GPUs 2 and 12 read at the same moments, so their rows interleave (and "12" contains "2").
measure::Measurement two_gpus() {
  measure::Measurement m;
  m.tool_version = "test";
  m.backend = "fake";
  m.job_start = 0s;
  m.job_end = 1s;
  for (unsigned index : {2u, 12u}) {
    m.gpus.push_back({index, "GPU-" + std::to_string(index), "Test GPU", "00000000:00:00.0"});
    sampling::GpuTrace trace;
    trace.gpu_index = index;
    for (int k = 0; k < 5; ++k) {
      trace.energy.push_back({Nanos{100ms * k}, 2ms, 1000u * index + static_cast<unsigned>(k)});
      trace.power_samples.push_back({Nanos{100ms * k + 20ms}, 100.0 + index});
    }
    m.traces.push_back(trace);
  }
  return m;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(TraceCsv, OneGpusTraceIsTheWholeFileWithTheOtherGpusRowsLeftOut) {
  const measure::Measurement m = two_gpus();
  std::ostringstream whole;
  write_trace_csv(whole, m);
  for (unsigned gpu : {2u, 12u}) {
    std::ostringstream own;
    write_trace_csv(own, m, gpu);
    std::vector<std::string> expected;
    std::size_t rows = 0;
    for (const auto& line : lines_of(whole.str())) {
      const bool data_row = line[0] != '#' && line.rfind("time_s,", 0) != 0;
      const auto first = line.find(',');
      const bool this_gpu =
          line.substr(first + 1, line.find(',', first + 1) - first - 1) == std::to_string(gpu);
      if (!data_row || this_gpu) expected.push_back(line);
      rows += data_row && this_gpu;
    }
    EXPECT_EQ(rows, 10u);  // 5 counter readings and 5 samples
    EXPECT_EQ(lines_of(own.str()), expected) << "GPU " << gpu;
  }
}

TEST(TraceCsv, AGpuWithoutATraceHasTheHeaderAlone) {
  std::ostringstream own;
  write_trace_csv(own, two_gpus(), 7);
  const auto lines = lines_of(own.str());
  ASSERT_EQ(lines.size(), 4u);  // the tool line, the job's window (two lines), the header
  EXPECT_EQ(lines[3].rfind("time_s,gpu,", 0), 0u);
}

std::string written(const std::string& name, const std::string& text) {
  const auto file = std::filesystem::path(::testing::TempDir()) / name;
  std::ofstream(file) << text;
  return file.string();
}

// A late drain's gap in the buffered samples is kept with the trace (the bars of windows with an edge in it
// are widened by it): the file records it, so an offline replay widens them as the live measurement did.
TEST(TraceCsv, SampleGapsAreWrittenPerGpuAndReadBackByTheReplay) {
  measure::Measurement m = two_gpus();
  m.job_start = 10s;  // the file's times count from the job's start
  m.job_end = 11s;
  m.traces[1].sample_gaps = {{10s + 200ms, 10s + 450ms}, {10s + 700ms, 10s + 900ms}};
  std::ostringstream whole;
  write_trace_csv(whole, m);
  EXPECT_NE(whole.str().find("# sample_gap gpu=12 after_s=0.200000 before_s=0.450000\n"), std::string::npos)
      << whole.str();
  const std::string path = written("gaps.csv", whole.str());
  const auto with_gaps = read_gpu_trace_csv(path, 12);
  ASSERT_EQ(with_gaps.sample_gaps.size(), 2u);
  EXPECT_EQ(with_gaps.sample_gaps[0].after, Nanos{200ms});
  EXPECT_EQ(with_gaps.sample_gaps[0].before, Nanos{450ms});
  EXPECT_EQ(with_gaps.sample_gaps[1].after, Nanos{700ms});
  EXPECT_EQ(with_gaps.sample_gaps[1].before, Nanos{900ms});
  EXPECT_TRUE(read_gpu_trace_csv(path, 2).sample_gaps.empty()) << "GPU 2 had none";
  std::ostringstream own;
  write_trace_csv(own, m, 2);
  EXPECT_EQ(own.str().find("sample_gap"), std::string::npos) << "another GPU's gap in GPU 2's file";
  // The file a sweep stores for GPU 12 (cli/sweep_command.cpp: only_gpu) keeps GPU 12's gaps.
  std::ostringstream twelve;
  write_trace_csv(twelve, m, 12);
  const auto stored = read_gpu_trace_csv(written("gaps-12.csv", twelve.str()), 12);
  ASSERT_EQ(stored.sample_gaps.size(), 2u) << twelve.str();
  EXPECT_EQ(stored.sample_gaps[1].before, Nanos{900ms});
}

// Gaps that overlap in a file (the sampler never writes them; a file put together by hand may hold them) are
// read as one: a window edge inside the outer one carries its energy on the bar as with the outer alone.
TEST(TraceCsv, OverlappingSampleGapsAreReadAsOne) {
  std::string rows = "time_s,gpu,power_sample_w\n";
  for (int ms = 20; ms <= 2000; ms += 20)
    if (ms <= 200 || ms >= 1000) rows += fmt::format("{:.6f},0,{}\n", ms / 1000.0, ms == 1000 ? 500 : 100);
  const std::string outer = "# sample_gap gpu=0 after_s=0.200000 before_s=1.000000\n";
  const std::string inner = "# sample_gap gpu=0 after_s=0.300000 before_s=0.400000\n";
  const auto both = read_gpu_trace_csv(written("overlapping.csv", outer + inner + rows), 0);
  const auto alone = read_gpu_trace_csv(written("outer.csv", outer + rows), 0);
  EXPECT_EQ(both.sample_gaps.size(), 1u);
  EXPECT_EQ(both.sample_gaps[0].after, Nanos{200ms});
  EXPECT_EQ(both.sample_gaps[0].before, Nanos{1000ms});
  const sampling::EnergyAccounting with_both(both), with_outer(alone);
  const sampling::WindowEnergy window = with_both.energy(600ms, 1500ms);
  EXPECT_EQ(window.uncertainty_j, with_outer.energy(600ms, 1500ms).uncertainty_j);
  EXPECT_GT(window.uncertainty_j, 300.0) << "the gap's 400 J (0.8 s at 500 W) on the bar";
}

// A gap line for a GPU with no rows: the replay would account a GPU the run never read (an empty trace,
// counted among the job's GPUs). A data error naming the line; a gap of another GPU than the one asked for
// is not read at all.
TEST(TraceCsv, ASampleGapOfAGpuWithoutRowsIsADataErrorNamingTheLine) {
  const std::string path = written("gap-of-no-gpu.csv",
                                   "# wattwise test trace\n# sample_gap gpu=7 after_s=0.2 before_s=0.4\n"
                                   "time_s,gpu,power_sample_w\n0.1,0,100\n0.5,0,100\n");
  const std::string phases = written("gap-of-no-gpu.phases.csv", "name,begin_s,end_s\nstep,0.1,0.5\n");
  try {
    const ReplayedRun run = read_replayed_run(path, phases, {});
    ADD_FAILURE() << "accepted, GPUs " << run.measurement.gpus.size();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData) << e.what();
    EXPECT_NE(std::string(e.what()).find("gap-of-no-gpu.csv:2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_gpu_trace_csv(path, 0).power_samples.size(), 2u);
}

TEST(TraceCsv, AMalformedSampleGapLineIsADataErrorNamingTheLine) {
  for (const std::string bad : {"# sample_gap gpu=0 after_s=0.5 before_s=0.2", "# sample_gap gpu=0 after_s=0.1",
                                "# sample_gap gpu=-1 after_s=0.1 before_s=0.2",
                                "# sample_gap gpu=0 after_s=x before_s=0.2",
                                "# sample_gap gpu=0 after_s=nan before_s=0.2",
                                "# sample_gap gpu=0 after_s=-inf before_s=inf",
                                // Past what the nanosecond time line holds (its conversion is undefined).
                                "# sample_gap gpu=0 after_s=1e300 before_s=1e301",
                                "# sample_gap gpu=0 after_s=-1e19 before_s=0.2",
                                // A key twice: which value was meant cannot be told.
                                "# sample_gap gpu=0 gpu=1 after_s=0.1 before_s=0.2",
                                "# sample_gap gpu=0 after_s=0.1 before_s=0.2 before_s=0.3"}) {
    const std::string path = written("bad-gap.csv", "# wattwise test trace\n" + bad + "\ntime_s,gpu\n");
    try {
      read_gpu_trace_csv(path, 0);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kData) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad-gap.csv:2"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace wattwise::report
