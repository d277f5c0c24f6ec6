// The measure JSON of a job that marked many occurrences: bounded in size, saying how many occurrences it
// left out, with every figure that needs all of them (totals, means, CVs, per-rank totals) still exact.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "measure/attribution.hpp"
#include "report/measure_report.hpp"
#include "report/phase_instances_json.hpp"

namespace wattwise::report {
namespace {

using namespace std::chrono_literals;

// A job of `iterations` 100 ms iterations inside 3 epochs on one GPU; iteration k draws 300 W +-3%.
measure::Measurement marked_job(int iterations) {
  measure::Measurement m;
  m.gpus.push_back({0, "GPU-test", "Test GPU", "00000000:00:00.0"});
  m.gpu_energy.resize(1);
  m.gpu_energy[0].gpu = m.gpus[0];
  m.job_start = 0s;
  m.job_end = Nanos{100ms * iterations} + 1s;
  const Nanos epoch = 100ms * ((iterations + 2) / 3);
  for (int e = 0; e < 3; ++e)
    m.phases.push_back(
        {"epoch", epoch * e, std::min(epoch * (e + 1), Nanos{100ms * iterations}), {}, 1, 0, 0});
  for (int k = 0; k < iterations; ++k)
    m.phases.push_back({"iteration", 100ms * k, 100ms * (k + 1), {{"samples", 64.0}}, 1, 0, 0});
  return m;
}

double watts_at(Nanos t) {
  return 300.0 * (1.0 + 0.03 * std::sin(static_cast<double>(t / 100ms) * 0.7));
}

void account(measure::Measurement& m) {
  const auto energy = [](std::size_t, Nanos t0, Nanos t1) {
    return sampling::WindowEnergy{watts_at(t0) * to_seconds(t1 - t0), sampling::EnergyMethod::kCounter};
  };
  measure::attribute_energy(m, energy, energy);
}

TEST(MeasureJson, ManyIterationsListABoundedSampleAndSayHowManyWereLeftOut) {
  constexpr int kIterations = 200'000;
  measure::Measurement m = marked_job(kIterations);
  account(m);
  const nlohmann::json j = measure_json(m);
  const auto& listed = j.at("phase_instances");
  EXPECT_LE(listed.size(), kMaxListedPhaseInstances);
  EXPECT_EQ(j.at("phase_instances_left_out").get<std::size_t>() + listed.size(), m.phase_instances.size());
  // Every epoch is listed (a name's share holds all of its few), and the iterations' first and last.
  int epochs = 0;
  for (const auto& inst : listed) epochs += inst.at("name") == "epoch";
  EXPECT_EQ(epochs, 3);
  EXPECT_EQ(listed.at(0).at("name"), "epoch");
  EXPECT_NEAR(listed.back().at("end_s").get<double>(), 0.1 * kIterations, 1e-9);
  EXPECT_LT(j.dump().size(), 16u << 20) << "a bounded file";
}

TEST(MeasureJson, PhaseMeansCvsAndPerRankTotalsCountEveryOccurrenceNotTheListedOnes) {
  constexpr int kIterations = 60'000;
  measure::Measurement m = marked_job(kIterations);
  account(m);
  const nlohmann::json j = measure_json(m);
  ASSERT_GT(j.at("phase_instances_left_out").get<std::size_t>(), 0u);
  std::vector<double> energies;
  for (int k = 0; k < kIterations; ++k) energies.push_back(watts_at(100ms * k) * 0.1);
  double sum = 0;
  for (double e : energies) sum += e;
  const double mean = sum / kIterations;
  double squares = 0;
  for (double e : energies) squares += (e - mean) * (e - mean);
  const double cv = std::sqrt(squares / (kIterations - 1)) / mean;

  const nlohmann::json* iteration = nullptr;
  for (const auto& p : j.at("phases"))
    if (p.at("name") == "iteration") iteration = &p;
  ASSERT_NE(iteration, nullptr) << j.at("phases").dump();
  EXPECT_EQ(iteration->at("count").get<int>(), kIterations);
  EXPECT_NEAR(iteration->at("energy_j").get<double>(), sum, 1e-9 * sum);
  EXPECT_NEAR(iteration->at("energy_mean_j").get<double>(), mean, 1e-9 * mean);
  EXPECT_NEAR(iteration->at("energy_cv").get<double>(), cv, 1e-6 * cv);
  EXPECT_NEAR(iteration->at("energy_min_j").get<double>(),
              *std::min_element(energies.begin(), energies.end()), 1e-9);
  EXPECT_NEAR(iteration->at("time_mean_s").get<double>(), 0.1, 1e-9);
  for (const auto& r : j.at("phases_by_rank")) {
    if (r.at("name") != "iteration") continue;
    EXPECT_EQ(r.at("count").get<int>(), kIterations);
    EXPECT_NEAR(r.at("energy_j").get<double>(), sum, 1e-9 * sum);
  }
}

TEST(MeasureJson, AFewOccurrencesAreAllListed) {
  measure::Measurement m = marked_job(50);
  account(m);
  const nlohmann::json j = measure_json(m);
  EXPECT_EQ(j.at("phase_instances").size(), 53u);
  EXPECT_EQ(j.at("phase_instances_left_out").get<int>(), 0);
}

TEST(MeasureJson, EachNameKeepsItsShareEvenlySpreadWithItsEnds) {
  std::vector<measure::PhaseInstance> instances(1000);
  for (std::size_t i = 0; i < instances.size(); ++i) instances[i].phase.name = i % 10 == 0 ? "rare" : "often";
  const auto listed = listed_phase_instances(instances, 200);  // a share of 100 per name
  std::size_t rare = 0, often = 0;
  for (std::size_t p : listed) (instances[p].phase.name == "rare" ? rare : often) += 1;
  EXPECT_EQ(rare, 100u);  // all of them: they fit
  EXPECT_EQ(often, 100u);
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end()));
  EXPECT_EQ(listed.front(), 0u);
  EXPECT_EQ(listed.back(), 999u);
}

// Issue 22, item 4: markers the job's own clients dropped (wattwise's queue full: a flood, or a stall) are
// said in the summary and the JSON, so a phase count that fell is not read as the job's.
TEST(MeasureSummary, MarkersTheJobLostAreSaidInTheSummaryAndTheJson) {
  measure::Measurement m = marked_job(30);
  account(m);
  m.dropped_markers = 1223;
  EXPECT_NE(measure_summary(m).find(", 1223 dropped by the job (wattwise's queue was full)"), std::string::npos)
      << measure_summary(m);
  EXPECT_EQ(measure_json(m).at("markers").at("dropped"), 1223);
  m.dropped_markers = 0;
  EXPECT_EQ(measure_summary(m).find("dropped"), std::string::npos) << measure_summary(m);
}

}  // namespace
}  // namespace wattwise::report
