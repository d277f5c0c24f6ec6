// In-process readings through the C API (docs/windows.md): a job under the real `wattwise measure` asks for
// the energy of the windows it marked, and a job without wattwise gets "not known", never a crash or a hang.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "e2e_fixture.hpp"
#include "fake_config.hpp"

namespace wattwise::e2e {
namespace {

// One line of e2e_job's `window` mode.
struct WindowLine {
  long long begin_ns = 0;
  long long end_ns = 0;
  int known = 0;
  double energy_j = 0;
  std::string method;
  std::map<unsigned, double> per_gpu_j;
};

std::vector<WindowLine> read_windows(const std::filesystem::path& file) {
  std::vector<WindowLine> lines;
  std::ifstream in(file);
  for (std::string text; std::getline(in, text);) {
    std::istringstream fields(text);
    WindowLine line;
    int gpu_count = 0;
    fields >> line.begin_ns >> line.end_ns >> line.known >> line.energy_j >> line.method >> gpu_count;
    for (int g = 0; g < gpu_count; ++g) {
      std::string item;
      fields >> item;
      line.per_gpu_j[static_cast<unsigned>(std::stoul(item))] = std::stod(item.substr(item.find(':') + 1));
    }
    lines.push_back(line);
  }
  return lines;
}

class WindowTest : public E2eTest {};

TEST_F(WindowTest, MeasureAnswersEachCWindowWithTheEnergyTheFakeGpusDrew) {
  use_config(two_gpu_config());
  const auto result = wattwise({"measure", "--json", path("m.json").string(), "--", E2E_JOB, "window", "3",
                                "700", path("windows.txt").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto profiles = fake_nvml::load_fake_config(path("fake_nvml.json").string()).gpus;
  const auto windows = read_windows(path("windows.txt"));
  ASSERT_EQ(windows.size(), 3u);
  std::vector<nlohmann::json> instances;
  const nlohmann::json measurement = read_json("m.json");
  for (const auto& inst : measurement.at("phase_instances"))
    if (inst.at("name") == "c_window") instances.push_back(inst);
  ASSERT_EQ(instances.size(), 3u);
  for (std::size_t k = 0; k < windows.size(); ++k) {
    const auto& w = windows[k];
    ASSERT_EQ(w.known, 1) << "window " << k;
    EXPECT_EQ(w.method, "samples");
    double exact_j = 0;
    for (unsigned gpu = 0; gpu < 2; ++gpu) {
      const double gpu_j = profiles.at(gpu).profile.energy_j(w.begin_ns / 1e9, w.end_ns / 1e9, 1e9);
      // The 20 ms samples straddling the square wave's 400 W step can misplace it by up to 20 ms at an edge.
      ASSERT_TRUE(w.per_gpu_j.contains(gpu));
      EXPECT_NEAR(w.per_gpu_j.at(gpu), gpu_j, 0.005 * gpu_j + (gpu == 0 ? 2 * 400 * 0.020 : 0.0)) << k;
      exact_j += gpu_j;
    }
    EXPECT_NEAR(w.energy_j, exact_j, 0.005 * exact_j + 2 * 400 * 0.020) << "window " << k;
    // The report's phase instance: the same window reconciled to the counter, within 1% plus the energy a
    // counter posting (100 ms) placed one period off would move (docs/windows.md).
    const double reported_j = instances[k].at("energy_j");
    EXPECT_NEAR(w.energy_j, reported_j, 0.01 * reported_j + (500 + kConstantPowerW) * 0.100)
        << "window " << k;
  }
}

TEST_F(WindowTest, WithoutWattwiseTheCApiSaysNotKnownSilently) {
  const auto result = run({E2E_JOB, "window", "2", "10", path("windows.txt").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  const auto windows = read_windows(path("windows.txt"));
  ASSERT_EQ(windows.size(), 2u);
  for (const auto& w : windows) EXPECT_EQ(w.known, 0);
}

TEST_F(WindowTest, ADeadSocketCostsOneLineOnStderrAndNoCrash) {
  env_["WATTWISE_WINDOW_SOCKET"] = path("gone.sock").string();
  const auto result = run({E2E_JOB, "window", "3", "10", path("windows.txt").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(single_error_line(result).rfind("wattwise: cannot ask for a window's energy", 0), 0u)
      << result.err;
  const auto windows = read_windows(path("windows.txt"));
  ASSERT_EQ(windows.size(), 3u);
  for (const auto& w : windows) EXPECT_EQ(w.known, 0);
}

}  // namespace
}  // namespace wattwise::e2e
