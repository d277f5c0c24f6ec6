#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/simulation.hpp"
#include "sim_test_helpers.hpp"

namespace wattwise::sim {
namespace {

// The published V100 sweep (shared/reference/v100_cnn_power_caps.csv): for each model the limit of the
// default row and of the rows that minimised E, EDP, EDS(2.0), EDS(1.5).
using LabelledLimits = std::map<std::string, std::map<std::string, double>>;  // model -> label -> W

std::optional<LabelledLimits> read_reference() {
  const std::filesystem::path path =
      std::filesystem::path(WATTWISE_REFERENCE_DIR) / "v100_cnn_power_caps.csv";
  std::ifstream in(path);
  if (!in) return std::nullopt;
  LabelledLimits limits;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string model, label, limit;
    std::getline(fields, model, ',');
    std::getline(fields, label, ',');
    std::getline(fields, limit, ',');
    limits[model][label] = std::stod(limit);
  }
  return limits;
}

struct Run {
  double limit_w;
  double energy_j;
  double time_s;
};

// One noise-free run per limit, measured like wattwise measures a job: counter difference, wall time.
std::vector<Run> sweep(const std::string& model) {
  SimulationOptions options;
  options.noise_fraction = 0;
  options.iteration_markers_per_epoch = 0;
  Simulation sim = make_simulation("v100:" + model, options);
  std::vector<Run> runs;
  for (double limit_w = 150; limit_w <= 300; limit_w += 5) {
    sim.system->gpu(0).set_power_limit_w(limit_w);
    auto job = sim.new_job(1);
    const Nanos start = sim.clock->now();
    const auto counter_start = *sim.system->gpu(0).energy_mj();
    testing::run_to_end(sim, *job);
    const auto counter_end = *sim.system->gpu(0).energy_mj();
    runs.push_back({limit_w, (counter_end - counter_start) / 1000.0, to_seconds(sim.clock->now() - start)});
  }
  return runs;
}

std::map<std::string, double> argmin_limits(const std::vector<Run>& runs) {
  const Run& ref = runs.back();  // 300 W, the default
  auto argmin = [&](auto score) {
    const Run* best = &runs.front();
    for (const Run& run : runs) {
      if (score(run) < score(*best)) best = &run;
    }
    return best->limit_w;
  };
  auto eds = [&](double k) {
    return [&ref, k](const Run& r) {
      return (k - 1) / (k * ref.energy_j) * r.energy_j + r.time_s / (k * ref.time_s);
    };
  };
  return {{"min_E", argmin([](const Run& r) { return r.energy_j; })},
          {"min_EDP", argmin([](const Run& r) { return r.energy_j * r.time_s; })},
          {"min_EDS2.0", argmin(eds(2.0))},
          {"min_EDS1.5", argmin(eds(1.5))}};
}

TEST(SimCalibration, V100SweepArgminsMatchThePublishedRows) {
  const auto reference = read_reference();
  if (!reference) GTEST_SKIP() << "shared/reference/v100_cnn_power_caps.csv not found";
  std::map<std::string, int> within_10w;
  for (const auto& [model, rows] : *reference) {
    const auto got = argmin_limits(sweep(model));
    for (const auto& [label, limit_w] : got) {
      const bool close = std::abs(limit_w - rows.at(label)) <= 10.0 + 1e-9;
      within_10w[label] += close;
      if (!close)
        std::cout << model << " " << label << ": " << limit_w << " W vs " << rows.at(label) << " W\n";
    }
  }
  ASSERT_EQ(within_10w.size(), 4u);
  for (const auto& [label, hits] : within_10w) EXPECT_GE(hits, 5) << label;
}

TEST(SimCalibration, DefaultLimitMatchesThePublishedDefaultRowOfEveryModel) {
  const std::map<std::string, std::pair<double, double>> default_rows = {
      // model -> (W, s)
      {"alexnet", {181.4, 39.7}},     {"vgg19", {264.9, 492.5}},    {"inception3", {265.8, 394.8}},
      {"inception4", {273.1, 845.1}}, {"resnet50", {262.3, 266.4}}, {"resnet152", {273.7, 683.0}}};
  for (const auto& [model, row] : default_rows) {
    SimulationOptions options;
    options.noise_fraction = 0;
    options.iteration_markers_per_epoch = 0;
    Simulation sim = make_simulation("v100:" + model, options);
    Nanos begin{0}, end{0};
    for (const auto& m : testing::run_to_end(sim, *sim.job)) {
      if (m.name == "epoch") (m.kind == workload::MarkerKind::kBegin ? begin : end) = m.t;
    }
    const double seconds = to_seconds(end - begin);
    SimGpu& gpu = sim.system->sim_gpu(0);
    EXPECT_NEAR(seconds, row.second, 0.001 * row.second) << model;
    EXPECT_NEAR((gpu.model_energy_j_at(end) - gpu.model_energy_j_at(begin)) / seconds, row.first, 0.5)
        << model;
  }
}

TEST(SimCalibration, SweepOf155RunsTakesWellUnderASecond) {
  const auto start = std::chrono::steady_clock::now();
  for (int repeat = 0; repeat < 5; ++repeat) sweep("resnet50");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace wattwise::sim
