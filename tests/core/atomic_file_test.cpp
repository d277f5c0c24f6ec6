#include "core/atomic_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <sstream>
#include "../support/temp_dir.hpp"

namespace wattwise {
namespace {

namespace fs = std::filesystem;

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {}));
}

TEST(AtomicFile, WritesAndReplacesLeavingNoTemporary) {
  const testing::TempDir dir("wattwise-atomic");
  write_file_atomically(dir.path() / "a.json", "{}\n");
  write_file_atomically(dir.path() / "a.json", "{\"b\": 1}\n");
  EXPECT_EQ(contents(dir.path() / "a.json"), "{\"b\": 1}\n");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(AtomicFile, TheTargetKeepsItsOldContentUntilCommit) {
  const testing::TempDir dir("wattwise-atomic");
  const auto target = dir.path() / "result.csv";
  std::ofstream(target) << "old\n";
  {
    AtomicFile file(target);
    file.write("new\n");
    EXPECT_EQ(contents(target), "old\n");
    EXPECT_TRUE(is_atomic_temporary_name(file.temporary().filename().string())) << file.temporary();
  }  // not committed: dropped
  EXPECT_EQ(contents(target), "old\n");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(AtomicFile, AReplacedFileKeepsItsPermissions) {
  const testing::TempDir dir("wattwise-atomic");
  const auto target = dir.path() / "private.json";
  std::ofstream(target) << "old\n";
  ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
  write_file_atomically(target, "new\n");
  struct stat info {};
  ASSERT_EQ(::stat(target.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

// rename() replaces a link at the target: the file the link named is untouched.
TEST(AtomicFile, ALinkAtTheTargetIsReplacedNotFollowed) {
  const testing::TempDir dir("wattwise-atomic");
  const auto victim = dir.path() / "victim";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, dir.path() / "journal.json");
  write_file_atomically(dir.path() / "journal.json", "{}\n");
  EXPECT_EQ(contents(victim), "precious\n");
  EXPECT_FALSE(fs::is_symlink(dir.path() / "journal.json"));
}

TEST(AtomicFile, AFailureSaysWhichStepAndWhyThroughTheCallersMessage) {
  const testing::TempDir dir("wattwise-atomic");
  const auto target = dir.path() / "missing-dir" / "out.json";
  try {
    write_file_atomically(target, "x", [](const WriteFailure& failure) {
      return data_error(std::string("custom ") + failure.step + " " + std::to_string(failure.error_number));
    });
    FAIL() << "wrote into a directory that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_EQ(std::string(e.what()), "custom create temporary file " + std::to_string(ENOENT));
  }
  try {
    write_file_atomically(target, "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("out.json (create temporary file: No such file"), std::string::npos)
        << e.what();
  }
}

TEST(AtomicFile, TemporaryNamesAreRecognised) {
  EXPECT_TRUE(is_atomic_temporary_name(".settings-journal-12.json.tmp-0123456789abcdef"));
  EXPECT_FALSE(is_atomic_temporary_name("settings-journal-12.json"));
  EXPECT_FALSE(is_atomic_temporary_name(".x.tmp-0123"));
  EXPECT_FALSE(is_atomic_temporary_name("x.tmp-0123456789abcdef"));
  EXPECT_FALSE(is_atomic_temporary_name(".x.tmp-0123456789abcdeg"));
}

}  // namespace
}  // namespace wattwise
