#pragma once

// The jobs the regret benchmarks (adaptive_regret, tune_regret) run on: the six simulated V100 models, then
// the same six replayed from the published table (WATTWISE_REFERENCE_CSV), so both judge on the same data.

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace wattwise::bench {

struct Profile {
  std::string name;      // v100:resnet50 or replay:resnet50
  std::string simulate;  // what --simulate gets
};

// The published table's rows of one model, as a runs CSV replay can read (the model column dropped).
inline std::string replay_csv(const std::filesystem::path& table, const std::string& model,
                              const std::filesystem::path& dir) {
  std::ifstream in(table);
  if (!in) throw std::runtime_error("cannot read " + table.string());
  std::string line, out;
  std::getline(in, line);
  out = line.substr(line.find(',') + 1) + "\n";
  while (std::getline(in, line))
    if (line.rfind(model + ",", 0) == 0) out += line.substr(model.size() + 1) + "\n";
  const auto path = dir / fmt::format("v100_{}.csv", model);
  std::ofstream(path) << out;
  return path.string();
}

// The replayed tables are written under the temporary directory's `scratch_dir`-PID: per process, so two
// benchmarks run at once do not rewrite each other's tables mid-read (a shared directory once made one read
// an empty CSV and abort).
inline std::vector<Profile> v100_bench_profiles(const std::filesystem::path& reference_csv,
                                                const std::string& scratch_dir) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("{}-{}", scratch_dir, ::getpid());
  std::filesystem::create_directories(dir);
  const std::vector<std::string> models = {"alexnet",    "vgg19",    "inception3",
                                           "inception4", "resnet50", "resnet152"};
  std::vector<Profile> profiles;
  for (const auto& m : models) profiles.push_back({"v100:" + m, "v100:" + m});
  for (const auto& m : models)
    profiles.push_back({"replay:" + m, "csv:" + replay_csv(reference_csv, m, dir)});
  return profiles;
}

}  // namespace wattwise::bench
