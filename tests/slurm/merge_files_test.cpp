// `wattwise merge` on a shared SLURM directory that another user can write: each hostile file is one data
// error naming the file and the field, or skipped and listed; nothing hangs, crashes or grows without bound.
#include "slurm/merge_files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "../support/temp_dir.hpp"

#include "core/error.hpp"
#include "slurm/slurm_task.hpp"

namespace wattwise::slurm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json task_file(int task_id) {
  SlurmTask t;
  t.job_id = "7";
  t.step_id = "0";
  t.node = "n1";
  t.task_id = task_id;
  t.tasks = 2;
  return {{"wall_s", 1.0},
          {"complete", true},
          {"energy_j", 10.0},
          {"gpus", json::array({{{"uuid", "GPU-a"}, {"energy_j", 10.0}, {"used_by_job", true}}})},
          {"phases", json::array()},
          {"phase_instances", json::array()},
          {"slurm", to_json(t)}};
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// The error's kind and line; an internal error or a crash fails the test.
std::pair<ErrorKind, std::string> refusal(const std::vector<std::string>& paths) {
  try {
    read_task_results(paths);
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  ADD_FAILURE() << "no error";
  return {ErrorKind::kInternal, ""};
}

TEST(MergeFiles, HostileFieldsAreDataErrorsNamingTheFileAndTheField) {
  const testing::TempDir dir("wattwise-merge-files");
  const auto path = (dir.path() / "task.json").string();
  struct Case {
    std::function<void(json&)> spoil;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](json& m) { m["complete"] = "yes"; }, "'complete'"},
      {[](json& m) {
         m["phase_instances"] = json::array({{{"name", "x"},
                                              {"rank", 0},
                                              {"begin_s", 0},
                                              {"end_s", 1},
                                              {"energy_j", 1},
                                              {"same_name_depth", "deep"}}});
       },
       "same_name_depth"},
      {[](json& m) { m["slurm"]["tasks"] = 2000000000; }, "slurm.tasks 2000000000"},
      {[](json& m) { m["slurm"]["task_id"] = -3; }, "slurm.task_id"},
      {[](json& m) { m["slurm"]["nodes"] = "many"; }, "slurm.nodes"},
      {[](json& m) {
         m["phases"] = json::array({{{"name", "x"}, {"count", 1e15}, {"time_s", 1}, {"energy_j", 1}}});
       },
       "'count'"},
  };
  for (const auto& c : cases) {
    json m = task_file(0);
    c.spoil(m);
    write(path, m.dump());
    const auto [kind, line] = refusal({path});
    EXPECT_EQ(kind, ErrorKind::kData) << line;
    EXPECT_NE(line.find("task.json"), std::string::npos) << line;
    EXPECT_NE(line.find(c.field), std::string::npos) << line;
  }
}

TEST(MergeFiles, DeepJsonIsADataErrorNotACrash) {
  const testing::TempDir dir("wattwise-merge-files");
  write(dir.path() / "deep.json", std::string(100000, '[') + std::string(100000, ']'));
  const auto [kind, line] = refusal({dir.path().string()});
  EXPECT_EQ(kind, ErrorKind::kData);
  EXPECT_NE(line.find("deep.json': JSON nested deeper than"), std::string::npos) << line;
}

TEST(MergeFiles, LinksOutOfTheDirectoryLoopsAndSpecialFilesAreSkippedAndListed) {
  const testing::TempDir dir("wattwise-merge-files");
  const auto out = dir.path() / "out";
  fs::create_directories(out);
  write(out / "job-7.task-0.json", task_file(0).dump());
  write(dir.path() / "outside.json", task_file(1).dump());
  fs::create_symlink(dir.path() / "outside.json", out / "escape.json");
  fs::create_symlink("/dev/zero", out / "zero.json");
  fs::create_symlink(out / "loop-b.json", out / "loop-a.json");
  fs::create_symlink(out / "loop-a.json", out / "loop-b.json");
  ASSERT_EQ(::mkfifo((out / "fifo.json").c_str(), 0600), 0);
  const auto read = read_task_results({out.string()});
  ASSERT_EQ(read.results.size(), 1u);
  EXPECT_EQ(read.results[0].task.task_id, 0);
  ASSERT_EQ(read.skipped.size(), 5u);
  const auto listed = [&](const std::string& name, const std::string& why) {
    return std::any_of(read.skipped.begin(), read.skipped.end(), [&](const std::string& line) {
      return line.find(name) != std::string::npos && line.find(why) != std::string::npos;
    });
  };
  EXPECT_TRUE(listed("escape.json", "a link out of the directory"));
  EXPECT_TRUE(listed("zero.json", "a link out of the directory"));
  EXPECT_TRUE(listed("loop-a.json", "leads nowhere"));
  EXPECT_TRUE(listed("fifo.json", "not a regular file"));
}

TEST(MergeFiles, AFifoNamedOnTheCommandLineIsRefusedNotRead) {
  const testing::TempDir dir("wattwise-merge-files");
  const auto fifo = dir.path() / "task.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto [kind, line] = refusal({fifo.string()});
  EXPECT_EQ(kind, ErrorKind::kUsage);
  EXPECT_NE(line.find("is a FIFO, not a regular file"), std::string::npos) << line;
}

}  // namespace
}  // namespace wattwise::slurm
