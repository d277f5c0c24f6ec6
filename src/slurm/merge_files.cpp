#include "slurm/merge_files.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/input_file.hpp"

namespace wattwise::slurm {

namespace {

namespace fs = std::filesystem;

// A task's result is a few kB to a few MB (phase instances of a long job); far more is no result of ours,
// and the directory is shared with the job's other users.
constexpr std::size_t kMaxResultBytes = std::size_t{256} << 20;
constexpr int kMaxResultDepth = 32;

nlohmann::json parse_file(const fs::path& path, FollowLinks follow) {
  const std::string text =
      read_regular_file(path, kMaxResultBytes, "a `wattwise measure` task result", follow);
  return parse_json_limited(text, fmt::format("'{}'", path.string()), kMaxResultDepth);
}

// The directory's *.json files, to be read without following links. A link is followed only to a regular
// file inside the directory, which is read in its place (another user's link to /dev/zero, to a FIFO, out
// of the directory or round in a loop is skipped and listed).
std::vector<fs::path> json_files_in(const fs::path& dir, std::vector<std::string>& skipped) {
  std::vector<fs::path> files;
  std::error_code error;
  const fs::path real_dir = fs::canonical(dir, error);
  if (error)
    throw environment_error(
        fmt::format("cannot list '{}' ({}): check its permissions", dir.string(), error.message()));
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    if (path.extension() != ".json") continue;
    std::error_code ignored;
    const auto own = it->symlink_status(ignored);
    if (fs::is_regular_file(own)) {
      files.push_back(path);
      continue;
    }
    std::string why =
        fmt::format("{}, not a regular file", fs::is_directory(own) ? "a directory" : "a special file");
    if (fs::is_symlink(own)) {
      const fs::path target = fs::canonical(path, ignored);
      const bool inside = !ignored && target.parent_path() == real_dir;
      if (inside && fs::is_regular_file(target, ignored)) {
        files.push_back(target);  // read without following a link again: it may have changed since
        continue;
      }
      why = ignored
                ? "a link that leads nowhere (or round in a loop)"
                : (inside ? "a link to something that is not a regular file" : "a link out of the directory");
    }
    skipped.push_back(fmt::format("skipped '{}': {}", path.string(), why));
  }
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
      out.results.push_back(task_result(parse_file(path, FollowLinks::kYes), path.string()));
      continue;
    }
    for (const auto& file : json_files_in(path, out.skipped)) {
      auto json = parse_file(file, FollowLinks::kNo);
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
