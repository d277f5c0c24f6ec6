#include "report/html/trace_reader.hpp"

#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <typeinfo>

#include "core/error.hpp"
#include "report/html/html_report.hpp"
#include "report/html/report_builder.hpp"

namespace wattwise::report::html {
namespace {

const char* kHeader =
    "time_s,gpu,energy_mj,power_inst_w,power_avg_w,power_sample_w,sm_clock_mhz,mem_clock_mhz,util_gpu_pct,"
    "util_mem_pct,temp_c,pstate,throttle_reasons,pcie_tx_mbps,pcie_rx_mbps,mem_used_mib\n";

std::string row(double t, int gpu, const std::string& inst, const std::string& sample) {
  std::ostringstream out;
  out << t << ',' << gpu << ",," << inst << ",," << sample << ",,,,,,,,,,\n";
  return out.str();
}

TEST(TraceReader, PrefersBufferedSamplesOverInstantPower) {
  std::istringstream in(std::string("# wattwise 0.1.0 trace\n") + kHeader + row(0.0, 0, "", "100") +
                        row(0.05, 0, "150", "") + row(0.1, 0, "", "200") + row(0.2, 0, "", "300"));
  const auto power = read_power_trace_csv(in, "t.csv");
  EXPECT_EQ(power.time_s, (std::vector<double>{0.0, 0.1, 0.2}));
  EXPECT_EQ(power.value, (std::vector<double>{100, 200, 300}));
}

// A stored trace with sample_gap comment lines (trace_csv.hpp kSampleGapLine; `report` of a sweep database
// reads each run's stored per-GPU file): they are comments to the plot's reader, not settings, and the
// job's window lines around them still are.
TEST(TraceReader, SampleGapLinesAreSkippedAndTheJobsWindowStillRead) {
  std::istringstream in(std::string("# wattwise 0.1.0 trace\n# job_start_s=0.000000\n# job_end_s=0.200000\n"
                                    "# sample_gap gpu=0 after_s=0.050000 before_s=0.150000\n") +
                        kHeader + row(0.0, 0, "", "100") + row(0.05, 0, "", "100") + row(0.15, 0, "", "300") +
                        row(0.3, 0, "", "300"));
  const PowerTrace trace = read_power_trace(in, "t.csv");
  ASSERT_TRUE(trace.job_start_s && trace.job_end_s);
  EXPECT_EQ(*trace.job_end_s, 0.2);
  EXPECT_EQ(trace.power_w.time_s.back(), 0.2) << "cut at the job's end";
}

TEST(TraceReader, FallsBackToInstantPower) {
  std::istringstream in(std::string(kHeader) + row(0.0, 0, "120", "") + row(0.1, 0, "130", ""));
  const auto power = read_power_trace_csv(in, "t.csv");
  EXPECT_EQ(power.value, (std::vector<double>{120, 130}));
}

TEST(TraceReader, SumsGpusWhereBothHaveData) {
  std::istringstream in(std::string(kHeader) + row(0.0, 0, "", "100") + row(0.0, 1, "", "50") +
                        row(1.0, 0, "", "100") + row(1.0, 1, "", "50") + row(2.0, 0, "", "100"));
  const auto power = read_power_trace_csv(in, "t.csv");
  ASSERT_FALSE(power.time_s.empty());
  EXPECT_DOUBLE_EQ(power.time_s.back(), 1.0);  // GPU 1 ends at 1 s
  for (double v : power.value) EXPECT_DOUBLE_EQ(v, 150.0);
}

// A sparse trace (a simulated one has a reading per change) summed on a uniform grid of as many points as
// one GPU has turned its 0.01 s step into a ramp over 0.67 s (the single-run report showed the sum of two
// GPUs climbing for 4 s while each GPU stepped at once): the sum keeps every GPU's instants.
TEST(TraceReader, SumOfSparseTracesKeepsTheirSteps) {
  std::istringstream in(std::string(kHeader) + row(0.0, 0, "", "100") + row(0.0, 1, "", "50") +
                        row(0.5, 0, "", "100") + row(0.51, 0, "", "300") + row(2.0, 0, "", "300") +
                        row(2.0, 1, "", "50"));
  const auto trace = read_power_trace(in, "t.csv");
  const auto energy = analysis::cumulative_energy_j(trace.power_w);
  EXPECT_NEAR(energy.value.back(), 0.5 * 100 + 0.01 * 200 + 1.49 * 300 + 2 * 50, 1e-9);  // 599 J
  ASSERT_EQ(trace.per_gpu_w.size(), 2u);
  EXPECT_EQ(trace.per_gpu_w[1].gpu, 1u);
  EXPECT_EQ(trace.per_gpu_w[0].power_w.time_s.size(), 4u);
}

TEST(TraceReader, ReadsConcatenatedFilesOfSeveralGpus) {
  std::istringstream in(std::string(kHeader) + row(0.0, 0, "", "10") + row(1.0, 0, "", "10") +
                        "# second file\n" + kHeader + row(0.0, 1, "", "5") + row(1.0, 1, "", "5"));
  const auto power = read_power_trace_csv(in, "t.csv");
  for (double v : power.value) EXPECT_DOUBLE_EQ(v, 15.0);
}

TEST(TraceReader, ATraceWithoutPowerIsADataError) {
  std::istringstream in(std::string(kHeader) + "0.0,0,12345,,,,,,,,,,,,,\n");
  try {
    read_power_trace_csv(in, "t.csv");
    FAIL() << "expected a data error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(std::string(e.what()).find("t.csv"), std::string::npos);
  }
}

TEST(TraceReader, ANonNumberNamesItsLine) {
  std::istringstream in(std::string(kHeader) + row(0.0, 0, "", "100") + "0.1,0,,,,abc,,,,,,,,,,\n");
  try {
    read_power_trace_csv(in, "t.csv");
    FAIL() << "expected a data error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv:3"), std::string::npos) << e.what();
  }
}

TEST(PhasesReader, ReadsDurationAndEnergyPerOccurrence) {
  std::istringstream in(
      "# wattwise phases\nname,begin_s,end_s,rank,energy_j,method,counters\n"
      "epoch,0.5,10.5,,2000.5,samples+counter,epoch=0\n"
      "\"iter, warm\",1.0,1.25,,,none,\n");
  const auto phases = read_phases_csv(in, "p.csv");
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].name, "epoch");
  EXPECT_DOUBLE_EQ(phases[0].time_s, 10.0);
  EXPECT_DOUBLE_EQ(*phases[0].energy_j, 2000.5);
  EXPECT_EQ(phases[1].name, "iter, warm");
  EXPECT_FALSE(phases[1].energy_j.has_value());
}

TEST(PhasesReader, LeavesOutPhasesNestedInOneOfTheSameName) {
  std::istringstream in(
      "name,begin_s,end_s,rank,energy_j,method,counters,same_name_depth\n"
      "step,0,4,,400,counter,,0\nstep,1,2,,100,counter,,1\nstep,5,6,,100,counter,,0\n");
  const auto phases = read_phases_csv(in, "p.csv");
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_DOUBLE_EQ(phases[0].time_s + phases[1].time_s, 5.0);
}

TEST(TraceReport, OneMeasurementMakesAReportOfItsTraceAndPhases) {
  std::istringstream trace(std::string(kHeader) + row(0.0, 0, "", "100") + row(1.0, 0, "", "100") +
                           row(2.0, 0, "", "300"));
  std::istringstream phases("name,begin_s,end_s,rank,energy_j,method,counters\nwork,0,2,,400,samples,\n");
  ReportInfo info;
  info.source = "run.csv";
  const auto model = build_report_model_from_trace(trace, &phases, info);
  ASSERT_EQ(model.settings.size(), 1u);
  EXPECT_DOUBLE_EQ(model.settings[0].energy_j.mean, 300.0);  // 100 J + 200 J, trapezoid
  EXPECT_DOUBLE_EQ(model.settings[0].time_s.mean, 2.0);
  EXPECT_EQ(model.traces.size(), 1u);
  EXPECT_EQ(model.phases.phase_names, (std::vector<std::string>{"work"}));
  EXPECT_EQ(chart_ids(model), (std::vector<std::string>{"chart-power", "chart-energy", "chart-phase-time",
                                                        "chart-phase-energy"}));
  EXPECT_EQ(model.info.method, "power trace integrated (trapezoid)");
}

// Issue 10, item 13: `report run.csv` integrated the ~0.25 s the sampler runs past the job's end (1016 J /
// 3.25 s against measure's 901 J / 3.00 s). The trace names the job's window and the report stops there.
TEST(TraceReport, WholeRunFiguresStopAtTheJobsEndNamedInTheTrace) {
  std::istringstream trace(
      std::string("# wattwise 0.1.0 trace\n# job_start_s=0.000000\n# job_end_s=2.500000\n") + kHeader +
      row(0.0, 0, "", "100") + row(1.0, 0, "", "100") + row(2.0, 0, "", "300") + row(3.0, 0, "", "300") +
      row(3.25, 0, "", "300"));
  const auto model = build_report_model_from_trace(trace, nullptr, ReportInfo{});
  ASSERT_EQ(model.settings.size(), 1u);
  EXPECT_DOUBLE_EQ(model.settings[0].time_s.mean, 2.5);
  EXPECT_DOUBLE_EQ(model.settings[0].energy_j.mean, 100 + 200 + 0.5 * 300);  // 450 J, not 825 J
  ASSERT_TRUE(model.runs.at(0).power_w);
  EXPECT_DOUBLE_EQ(model.runs[0].power_w->time_s.back(), 2.5);
}

TEST(TraceReader, ClipsToAWindowWithInterpolatedEdges) {
  analysis::TimeSeries s{{0, 1, 2}, {0, 10, 20}};
  const auto clipped = clip_to_window(s, 0.5, 1.5);
  EXPECT_EQ(clipped.time_s, (std::vector<double>{0.5, 1, 1.5}));
  EXPECT_EQ(clipped.value, (std::vector<double>{5, 10, 15}));
  EXPECT_EQ(clip_to_window(s, 0, 2).time_s, s.time_s);
}

TEST(TraceReader, HostileInputIsADataErrorAndNothingElse) {
  const std::string good = std::string(kHeader) + row(0.0, 0, "", "100") + row(1.0, 0, "", "100");
  for (const std::string& bad : std::vector<std::string>{
           std::string(kHeader) + row(0.0, 0, "", "nan") + row(1.0, 0, "", "1"),
           std::string(kHeader) + "0,1e300,,,,5,,,,,,,,,,\n1,1e300,,,,5,,,,,,,,,,\n",
           std::string(kHeader) + "0,-3,,,,5,,,,,,,,,,\n", std::string(kHeader) + "inf,0,,,,5,,,,,,,,,,\n",
           std::string(kHeader) + "0,0,,,,5x,,,,,,,,,,\n", "# job_end_s=abc\n" + good,
           "# job_start_s=2\n# job_end_s=1\n" + good, std::string("\"unclosed\n")}) {
    std::istringstream in(bad);
    EXPECT_THROW(read_power_trace(in, "t.csv"), Error) << bad;
  }
}

// Issue 10, item 10: a phase name with invalid UTF-8 made `report` die with "internal error" (json dump).
TEST(TraceReport, InvalidUtf8InAPhaseNameIsRepairedAndTheReportRenders) {
  std::istringstream trace(std::string(kHeader) + row(0.0, 0, "", "100") + row(1.0, 0, "", "100"));
  std::istringstream phases("name,begin_s,end_s,rank,energy_j,method,counters\nst\xFFp,0,1,,100,samples,\n");
  const auto model = build_report_model_from_trace(trace, &phases, ReportInfo{});
  EXPECT_EQ(model.phases.phase_names, (std::vector<std::string>{"st\xEF\xBF\xBDp"}));
  EXPECT_NO_THROW((void)render_html_report(model));
}

// A seeded mini-fuzz in every CI run (the libFuzzer targets go much further): random mutations of a valid
// trace and phases file either read or fail with a wattwise::Error, never anything else.
TEST(TraceReader, MutatedInputsReadOrFailWithADataErrorOnly) {
  const std::string trace = std::string("# wattwise trace\n# job_start_s=0\n# job_end_s=1.5\n") + kHeader +
                            row(0.0, 0, "", "100") + row(0.5, 1, "90", "") + row(1.0, 0, "", "110") +
                            row(1.5, 1, "95", "") + row(2.0, 0, "", "120");
  const std::string phases =
      "name,begin_s,end_s,rank,energy_j,method,counters,same_name_depth\n"
      "\"a,b\",0,1,,5,x,k=1,0\nc,0.5,0.7,1,,x,,1\n";
  const std::string alphabet = std::string(",\"\n\r#=.-+e0123456789nainf ") + '\0' + "\xFF\x1b";
  std::mt19937 random(20261123);
  for (int trial = 0; trial < 4000; ++trial) {
    for (const std::string* base : {&trace, &phases}) {
      std::string input = *base;
      const int edits = 1 + static_cast<int>(random() % 6);
      for (int e = 0; e < edits && !input.empty(); ++e) {
        const std::size_t at = random() % input.size();
        switch (random() % 3) {
          case 0:
            input[at] = alphabet[random() % alphabet.size()];
            break;
          case 1:
            input.insert(at, 1, alphabet[random() % alphabet.size()]);
            break;
          default:
            input.erase(at, 1 + random() % 8);
        }
      }
      std::istringstream in(input);
      try {
        if (base == &trace)
          (void)read_power_trace(in, "t.csv");
        else
          (void)read_phases_csv(in, "p.csv");
      } catch (const Error&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << "seed trial " << trial << ": " << typeid(e).name() << ": " << e.what() << "\n"
                      << input;
      }
    }
  }
}

}  // namespace
}  // namespace wattwise::report::html
