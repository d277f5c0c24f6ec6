#include "measure/attribution.hpp"

#include "workload/phases.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace wattwise::measure {
namespace {

using namespace std::chrono_literals;

// A window function for GPUs that each draw a constant power: energy = power x duration.
WindowEnergyFn constant_power(std::vector<double> watts) {
  return [watts](std::size_t gpu, Nanos t0, Nanos t1) {
    return sampling::WindowEnergy{watts.at(gpu) * to_seconds(t1 - t0), sampling::EnergyMethod::kCounter};
  };
}

Measurement two_gpu_measurement(bool second_used) {
  Measurement m;
  m.job_start = 0s;
  m.job_end = 10s;
  for (unsigned i = 0; i < 2; ++i) {
    hw::GpuIdentity id;
    id.index = i;
    m.gpus.push_back(id);
    GpuEnergy e;
    e.gpu = id;
    e.used_by_job = (i == 0) || second_used;
    m.gpu_energy.push_back(e);
  }
  m.traces.resize(2);
  return m;
}

workload::Phase phase(std::string name, Nanos begin, Nanos end, std::optional<int> rank = std::nullopt,
                      std::map<std::string, double> counters = {}) {
  workload::Phase p;
  p.name = std::move(name);
  p.begin = begin;
  p.end = end;
  p.rank = rank;
  p.counters = std::move(counters);
  return p;
}

TEST(Attribution, WholeRunEnergyAndAveragePowerPerGpu) {
  auto m = two_gpu_measurement(true);
  attribute_energy(m, constant_power({300, 100}), constant_power({300, 100}));
  EXPECT_DOUBLE_EQ(*m.gpu_energy[0].energy_j, 3000);
  EXPECT_DOUBLE_EQ(*m.gpu_energy[1].energy_j, 1000);
  EXPECT_DOUBLE_EQ(*m.gpu_energy[0].avg_power_w, 300);
  EXPECT_DOUBLE_EQ(*m.total_energy_j(), 4000);
}

TEST(Attribution, PhaseWithoutRankIsChargedToEveryJobGpuOnce) {
  auto m = two_gpu_measurement(true);
  m.phases = {phase("epoch", 1s, 3s)};
  attribute_energy(m, constant_power({300, 100}), constant_power({300, 100}));
  ASSERT_EQ(m.phase_instances.size(), 1u);
  EXPECT_DOUBLE_EQ(*m.phase_instances[0].energy_j, 2 * 300 + 2 * 100);
}

TEST(Attribution, RankedPhaseIsChargedOnlyToItsGpu) {
  auto m = two_gpu_measurement(true);
  m.phases = {phase("forward", 1s, 2s, 1), phase("forward", 1s, 2s, 0)};
  attribute_energy(m, constant_power({300, 100}), constant_power({300, 100}));
  EXPECT_DOUBLE_EQ(*m.phase_instances[0].energy_j, 100);
  EXPECT_FALSE(m.phase_instances[0].energy_per_gpu_j[0].has_value());
  EXPECT_DOUBLE_EQ(*m.phase_instances[1].energy_j, 300);
  ASSERT_EQ(m.phase_summaries.size(), 1u);
  EXPECT_DOUBLE_EQ(*m.phase_summaries[0].energy_j, 400);
  EXPECT_EQ(m.phase_summaries[0].count, 2u);
}

TEST(Attribution, IdleGpuIsNeverChargedWithPhasesButKeepsItsOwnEnergy) {
  auto m = two_gpu_measurement(false);
  m.phases = {phase("epoch", 0s, 10s)};
  attribute_energy(m, constant_power({300, 60}), constant_power({300, 60}));
  EXPECT_DOUBLE_EQ(*m.phase_instances[0].energy_j, 3000);
  EXPECT_DOUBLE_EQ(*m.gpu_energy[1].energy_j, 600);
  EXPECT_DOUBLE_EQ(*m.total_energy_j(), 3000);  // idle energy is reported apart, not in the job's total
}

TEST(Attribution, JoulesPerSampleFromCounters) {
  auto m = two_gpu_measurement(false);
  m.phases = {phase("iteration", 0s, 1s, std::nullopt, {{"samples", 128}}),
              phase("iteration", 1s, 2s, std::nullopt, {{"samples", 128}})};
  attribute_energy(m, constant_power({256, 0}), constant_power({256, 0}));
  ASSERT_EQ(m.phase_summaries.size(), 1u);
  EXPECT_DOUBLE_EQ(*m.phase_summaries[0].samples, 256);
  EXPECT_DOUBLE_EQ(*m.phase_summaries[0].j_per_sample(), 2.0);
}

TEST(Attribution, AbsentEnergyStaysAbsent) {
  auto m = two_gpu_measurement(false);
  m.phases = {phase("epoch", 0s, 1s)};
  WindowEnergyFn nothing = [](std::size_t, Nanos, Nanos) { return sampling::WindowEnergy{}; };
  attribute_energy(m, nothing, nothing);
  EXPECT_FALSE(m.gpu_energy[0].energy_j.has_value());
  EXPECT_FALSE(m.gpu_energy[0].avg_power_w.has_value());
  EXPECT_FALSE(m.phase_instances[0].energy_j.has_value());
  EXPECT_FALSE(m.phase_summaries[0].energy_j.has_value());
  EXPECT_FALSE(m.total_energy_j().has_value());
}

TEST(Attribution, AGpuLostDuringTheRunCoversOnlyUpToItsLastReadAndSaysSo) {
  auto m = two_gpu_measurement(true);
  // GPU 1 was lost at 4 s; its last counter read was at 3.99 s.
  m.traces[1].energy = {{0s, 0s, 1000}, {3990ms, 0s, 2000}};
  m.traces[1].failure = sampling::SourceFailure{4s, true, "GPU 1: nvmlDeviceGetSamples failed: GPU is lost"};
  m.traces[1].failed_readings = 2;
  m.phases = {phase("epoch", 1s, 3s), phase("epoch", 5s, 7s), phase("all", 0s, 10s)};
  attribute_energy(m, constant_power({300, 100}), constant_power({300, 100}));

  EXPECT_TRUE(m.gpu_energy[0].complete());
  EXPECT_DOUBLE_EQ(*m.gpu_energy[0].energy_j, 3000);
  const GpuEnergy& lost = m.gpu_energy[1];
  EXPECT_FALSE(lost.complete());
  EXPECT_FALSE(m.complete());
  EXPECT_EQ(lost.covered_until, 3990ms);
  EXPECT_EQ(lost.failed_readings, 2u);
  EXPECT_DOUBLE_EQ(*lost.energy_j, 399);
  EXPECT_DOUBLE_EQ(*lost.avg_power_w, 100) << "average power over the covered span, not the whole run";
  // A phase before the loss has both GPUs; one after it, or across it, has no figure for the lost GPU.
  EXPECT_DOUBLE_EQ(*m.phase_instances[0].energy_per_gpu_j[1], 200);
  EXPECT_FALSE(m.phase_instances[1].energy_per_gpu_j[1].has_value());
  EXPECT_FALSE(m.phase_instances[1].energy_j.has_value());
  EXPECT_FALSE(m.phase_instances[2].energy_per_gpu_j[1].has_value());
  EXPECT_DOUBLE_EQ(*m.phase_instances[2].energy_per_gpu_j[0], 3000);
}

TEST(Attribution, AGpuLostBeforeTheJobStartedHasNoFigure) {
  auto m = two_gpu_measurement(true);
  m.job_start = 1s;
  m.traces[1].failure = sampling::SourceFailure{500ms, true, "GPU 1: lost"};
  attribute_energy(m, constant_power({300, 100}), constant_power({300, 100}));
  EXPECT_FALSE(m.gpu_energy[1].energy_j.has_value());
  EXPECT_FALSE(m.total_energy_j().has_value());
}

}  // namespace
}  // namespace wattwise::measure

namespace wattwise::measure {
namespace {

TEST(Attribution, PhaseTimeOfRanksSideBySideIsTheLongestRanksNotTheSum) {
  auto m = two_gpu_measurement(true);
  m.phases = {phase("epoch", 1s, 4s, 0), phase("epoch", 1s, 5s, 1)};
  attribute_energy(m, constant_power({300, 100}), constant_power({300, 100}));
  ASSERT_EQ(m.phase_summaries.size(), 1u);
  EXPECT_DOUBLE_EQ(m.phase_summaries[0].time_s, 4.0);
  EXPECT_DOUBLE_EQ(*m.phase_summaries[0].energy_j, 3 * 300 + 4 * 100);
}

}  // namespace
}  // namespace wattwise::measure

namespace wattwise::measure {
namespace {

// Issue 10, item 13: a "step" inside a "step" counted its time and energy twice.
TEST(Attribution, SameNameNestedPhaseCountsOnceThroughItsOutermostOccurrence) {
  auto m = two_gpu_measurement(false);
  m.phases =
      workload::build_phases({{Nanos{1s}, workload::MarkerKind::kBegin, "step", {}, 1, {}, {}},
                              {Nanos{2s}, workload::MarkerKind::kBegin, "step", {}, 1, {}, {}},
                              {Nanos{3s}, workload::MarkerKind::kEnd, "step", {}, 1, {}, {}},
                              {Nanos{5s}, workload::MarkerKind::kEnd, "step", {{"samples", 8}}, 1, {}, {}}})
          .phases;
  attribute_energy(m, constant_power({100, 0}), constant_power({100, 0}));
  ASSERT_EQ(m.phase_instances.size(), 2u);  // both occurrences are listed
  ASSERT_EQ(m.phase_summaries.size(), 1u);
  EXPECT_EQ(m.phase_summaries[0].count, 1u);
  EXPECT_DOUBLE_EQ(m.phase_summaries[0].time_s, 4.0);
  EXPECT_DOUBLE_EQ(*m.phase_summaries[0].energy_j, 400.0);
  EXPECT_DOUBLE_EQ(*m.phase_summaries[0].samples, 8.0);
}

}  // namespace
}  // namespace wattwise::measure

namespace wattwise::measure {
namespace {

// Issue 21 item 5: the node over a phase is every measured GPU, idle ones included, over the phase's time.
TEST(Attribution, NodeOverAPhaseCountsIdleGpusOverItsTime) {
  auto m = two_gpu_measurement(false);
  m.phases = {phase("training", 2s, 6s), phase("warmup", 0s, 1s)};
  attribute_energy(m, constant_power({300, 80}), constant_power({300, 80}));
  ASSERT_EQ(m.phase_summaries.size(), 2u);
  EXPECT_DOUBLE_EQ(*m.phase_summaries[0].energy_j, 4 * 300);            // the job's GPU
  EXPECT_DOUBLE_EQ(*m.phase_summaries[0].node.gpus_j, 4 * (300 + 80));  // and the idle one
  EXPECT_DOUBLE_EQ(*m.phase_summaries[1].node.gpus_j, 380);
}

// Ranks side by side are one span of the node's time: overlapping spans are merged, not added.
TEST(Attribution, NodeOverRanksSideBySideCountsTheirOverlapOnce) {
  auto m = two_gpu_measurement(true);
  m.phases = {phase("epoch", 1s, 4s, 0), phase("epoch", 2s, 5s, 1), phase("epoch", 7s, 8s, 0)};
  attribute_energy(m, constant_power({300, 100}), constant_power({300, 100}));
  const auto spans = phase_spans(m.phases, "epoch");
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0], (std::pair<Nanos, Nanos>{1s, 5s}));
  EXPECT_EQ(spans[1], (std::pair<Nanos, Nanos>{7s, 8s}));
  EXPECT_DOUBLE_EQ(*m.phase_summaries[0].node.gpus_j, (4 + 1) * (300 + 100));
}

TEST(Attribution, NodeOverAPhaseIsAbsentWhereAGpuHasNoFigure) {
  auto m = two_gpu_measurement(false);
  m.phases = {phase("training", 2s, 6s)};
  WindowEnergyFn job_only = [](std::size_t gpu, Nanos t0, Nanos t1) {
    return gpu == 0 ? sampling::WindowEnergy{300 * to_seconds(t1 - t0), sampling::EnergyMethod::kCounter}
                    : sampling::WindowEnergy{};
  };
  attribute_energy(m, job_only, job_only);
  EXPECT_DOUBLE_EQ(*m.phase_summaries[0].energy_j, 1200);
  EXPECT_FALSE(m.phase_summaries[0].node.gpus_j);
}

// A constant 150 W GPU whose 1 s counter pieces each hold their own error, one of them (2.0-3.0 s) 10% low
// with a bar of 12% per window: what issue 20's load test saw (repetition 47: a constant GPU's iterations
// 8.7% low) before the accounting let the samples place a held-up read's knot
// (sampling/energy_accounting_test.cpp, AHeldUpRead...). Every window inside one piece shares its error.
sampling::WindowEnergy piece_with_a_shared_error(Nanos t0, Nanos t1) {
  const auto piece_of = [](Nanos t) { return t / 1s * 1s; };
  const bool low = piece_of(t0) == 2s && piece_of(t1) == 2s;
  sampling::WindowEnergy e{150 * to_seconds(t1 - t0) * (low ? 0.9 : 1.0), sampling::EnergyMethod::kSamplesReconciled};
  e.uncertainty_j = (low ? 0.12 : 0.02) * 150 * to_seconds(t1 - t0);
  e.pieces = std::pair{piece_of(t0), piece_of(t1)};
  return e;
}

double hypot_of_bars(const Measurement& m, const std::string& name) {
  double bar = 0;
  for (const auto& inst : m.phase_instances)
    if (inst.phase.name == name) bar = std::hypot(bar, inst.uncertainty_j);
  return bar;
}

// Rank 0's occurrences of `name`, `length` long from `from` every `every` before `until`, on that GPU.
Measurement attributed_with_a_shared_error(const std::string& name, Nanos from, Nanos until, Nanos every,
                                           Nanos length) {
  Measurement m = two_gpu_measurement(false);
  const WindowEnergyFn window = [](std::size_t, Nanos t0, Nanos t1) { return piece_with_a_shared_error(t0, t1); };
  for (Nanos t = from; t < until; t += every) m.phases.push_back(phase(name, t, t + length, 0));
  attribute_energy(m, window, window);
  return m;
}

TEST(SummedBar, OccurrencesInOneCounterPieceAddTheirBarsLinearlyAndCoverTheirSum) {
  const Measurement m = attributed_with_a_shared_error("iteration", 2100ms, 2900ms, 200ms, 150ms);
  ASSERT_EQ(m.phase_summaries.size(), 1u);
  const PhaseSummary& s = m.phase_summaries[0];
  ASSERT_TRUE(s.energy_j);
  const double truth = 4 * 0.15 * 150;
  const double error = std::abs(*s.energy_j - truth);
  for (const auto& inst : m.phase_instances)
    EXPECT_LE(std::abs(*inst.energy_j - 0.15 * 150), inst.uncertainty_j) << "each within its own bar";
  EXPECT_GT(error, 0.05 * truth);
  EXPECT_GT(error, hypot_of_bars(m, "iteration")) << "in quadrature the bars missed the truth";
  EXPECT_LE(error, s.uncertainty_j);
  EXPECT_DOUBLE_EQ(m.phase_rank_uncertainty_j.at({"iteration", 0}), s.uncertainty_j);
}

TEST(SummedBar, OccurrencesInPiecesOfTheirOwnAddTheirBarsInQuadrature) {
  const Measurement m = attributed_with_a_shared_error("step", 4300ms, 8300ms, 1s, 300ms);
  ASSERT_EQ(m.phase_summaries.size(), 1u);
  double linear = 0;
  for (const auto& inst : m.phase_instances) linear += inst.uncertainty_j;
  EXPECT_NEAR(m.phase_summaries[0].uncertainty_j, hypot_of_bars(m, "step"), 1e-9);
  EXPECT_LT(m.phase_summaries[0].uncertainty_j, 0.6 * linear);
}

TEST(SummedBar, OneOccurrenceOnTwoGpusKeepsItsOwnBar) {
  Measurement m = two_gpu_measurement(true);
  const WindowEnergyFn window = [](std::size_t gpu, Nanos t0, Nanos t1) {
    sampling::WindowEnergy e{100.0 * to_seconds(t1 - t0), sampling::EnergyMethod::kSamplesReconciled};
    e.uncertainty_j = gpu == 0 ? 3 : 4;
    e.pieces = std::pair{t0, t1};
    return e;
  };
  m.phases.push_back(phase("launch", 1s, 2s));
  attribute_energy(m, window, window);
  ASSERT_EQ(m.phase_instances.size(), 1u);
  EXPECT_DOUBLE_EQ(m.phase_instances[0].uncertainty_j, 7);
  EXPECT_DOUBLE_EQ(m.phase_summaries.at(0).uncertainty_j, 7);
}

}  // namespace
}  // namespace wattwise::measure
