// The trace CSV of one GPU (what a sweep stores per GPU): the whole trace's file with the other GPUs' rows
// left out, written so rather than cut out of the whole file's text.
#include "report/trace_csv.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace wattwise::report
