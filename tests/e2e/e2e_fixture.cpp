#include "e2e_fixture.hpp"

#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <iostream>

namespace wattwise::e2e {

nlohmann::json two_gpu_config() {
  return {
      {"driver_version", "580.159.04"},
      {"gpus",
       {{{"name", "NVIDIA H100 80GB HBM3"},
         {"uuid", "GPU-e2e-square"},
         {"pci_bus_id", "00000000:19:00.0"},
         {"power_limit_w", {{"min", 200}, {"max", 700}, {"default", 700}, {"initial", 600}}},
         {"profile", {{{"duration_s", 0.5}, {"watts", 500}}, {{"duration_s", 0.5}, {"watts", 100}}}}},
        {{"name", "NVIDIA H100 PCIe"},
         {"uuid", "GPU-e2e-constant"},
         {"pci_bus_id", "00000000:3B:00.0"},
         {"power_limit_w", {{"min", 150}, {"max", 350}, {"default", 310}, {"initial", 320}}},
         {"profile", {{{"duration_s", 1.0}, {"watts", kConstantPowerW}}}}}}},
  };
}

void E2eTest::SetUp() {
  env_ = minimal_environment();
  env_["WATTWISE_NVML_LIB"] = FAKE_NVML_PATH;
  env_["PYTHONPATH"] = PYTHON_DIR;
  // Keep the run's marker socket directory inside this test's directory.
  env_["TMPDIR"] = dir_.string();
  // The config file (docs/footprint.md) is looked for here, never in the developer's own ~/.config.
  env_["XDG_CONFIG_HOME"] = (dir_ / "config").string();
}

void E2eTest::TearDown() {
  // Kept on failure, to look at what the binary wrote.
  if (HasFailure()) {
    std::cerr << "e2e: outputs kept in " << dir_.string() << "\n";
    temp_.keep();
  }
}

void E2eTest::use_config(const nlohmann::json& config) {
  const auto config_path = dir_ / "fake_nvml.json";
  std::ofstream(config_path) << config.dump(2);
  env_["WATTWISE_FAKE_NVML_CONFIG"] = config_path.string();
}

ProcessResult E2eTest::wattwise(const std::vector<std::string>& args, SpawnOptions options) {
  std::vector<std::string> argv = {WATTWISE_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, std::move(options));
}

ProcessResult E2eTest::run(const std::vector<std::string>& argv, SpawnOptions options) {
  options.capture_dir = dir_;
  return run_process(argv, env_, options);
}

nlohmann::json E2eTest::read_json(const std::string& name) const {
  std::ifstream in(path(name));
  if (!in) throw std::runtime_error("no file " + path(name).string());
  return nlohmann::json::parse(in);
}

std::vector<std::string> E2eTest::read_lines(const std::string& name) const {
  std::ifstream in(path(name));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

double accuracy_tolerance(double strict, double bar) {
  static const bool under_load = std::getenv("WATTWISE_E2E_UNDER_LOAD") != nullptr;
  return under_load ? std::max(strict, bar) : strict;
}

std::string single_error_line(const ProcessResult& r) {
  EXPECT_FALSE(r.err.empty()) << "expected an error message on stderr";
  if (r.err.empty()) return "";
  EXPECT_EQ(r.err.back(), '\n') << r.err;
  const std::string line = r.err.substr(0, r.err.size() - 1);
  EXPECT_EQ(line.find('\n'), std::string::npos) << "expected one line, got:\n" << r.err;
  EXPECT_EQ(line.rfind("wattwise: ", 0), 0u) << line;
  return line;
}

double job_start_monotonic_s(const nlohmann::json& measurement, const std::filesystem::path& anchor_file) {
  std::ifstream in(anchor_file);
  long long anchor_ns = 0;
  if (!(in >> anchor_ns))
    throw std::runtime_error("the job wrote no anchor timestamp to " + anchor_file.string());
  for (const auto& inst : measurement.at("phase_instances")) {
    if (inst.at("name") == "anchor")
      return static_cast<double>(anchor_ns) / 1e9 - inst.at("begin_s").get<double>();
  }
  throw std::runtime_error("no 'anchor' phase instance in the measurement JSON");
}

}  // namespace wattwise::e2e
