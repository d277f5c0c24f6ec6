#include "slurm/merge_files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/error.hpp"

namespace wattwise::slurm {

namespace {

namespace fs = std::filesystem;

nlohmann::json parse_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in)
    throw environment_error(
        fmt::format("cannot read '{}' ({}): check its permissions", path.string(), std::strerror(errno)));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw data_error(
        fmt::format("'{}' is not valid JSON ({}): a task killed while writing leaves no file, so "
                    "this one was changed by hand or is no wattwise result",
                    path.string(), e.what()));
  }
}

std::vector<fs::path> json_files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    if (it->path().extension() == ".json" && it->is_regular_file()) files.push_back(it->path());
  if (error)
    throw environment_error(
        fmt::format("cannot list '{}' ({}): check its permissions", dir.string(), error.message()));
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

ReadResults read_task_results(const std::vector<std::string>& paths) {
  ReadResults out;
  for (const auto& given : paths) {
    const fs::path path(given);
    std::error_code error;
    const auto status = fs::status(path, error);
    if (!fs::exists(status))
      throw usage_error(
          fmt::format("'{}' does not exist: give the --out-dir of `wattwise measure`, or its files", given));
    if (!fs::is_directory(status)) {
      out.results.push_back(task_result(parse_file(path), path.string()));
      continue;
    }
    for (const auto& file : json_files_in(path)) {
      auto json = parse_file(file);
      if (!json.is_object() || !json.contains("slurm") || !json.at("slurm").is_object()) {
        out.skipped.push_back(
            fmt::format("skipped '{}': no task result of `wattwise measure` under srun", file.string()));
        continue;
      }
      out.results.push_back(task_result(json, file.string()));
    }
  }
  return out;
}

}  // namespace wattwise::slurm
