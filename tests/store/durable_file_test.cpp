#include "store/durable_file.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"

namespace wattwise::store {
namespace {

using wattwise::testing::TempDir;

std::string contents(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(DurableFile, WritesTheWholeContentAndLeavesNoTemporaryFile) {
  TempDir dir("wattwise-durable");
  write_file_durably(dir.path() / "run-0000.csv", "time_s,gpu\n0,0\n");
  write_file_durably(dir.path() / "run-0000.csv", "time_s,gpu\n1,0\n");  // replaces, as a resumed run does
  EXPECT_EQ(contents(dir.path() / "run-0000.csv"), "time_s,gpu\n1,0\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

// A full disk: in a child whose files may not grow past 4 KiB (RLIMIT_FSIZE; SIGXFSZ ignored, so the write
// fails with EFBIG as a full disk fails it with ENOSPC). The old code (std::ofstream, unchecked) left a file
// cut at 4 KiB and said nothing.
TEST(DurableFile, AFullDiskIsAClearErrorAndLeavesNoPartFile) {
  TempDir dir("wattwise-durable");
  const auto target = dir.path() / "run-0001.csv";
  const auto message = dir.path() / "message.txt";
  const pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(90);
    int code = 1;
    std::string what;
    try {
      write_file_durably(target, std::string(100000, 'x'));
    } catch (const Error& e) {
      what = e.what();
      code = e.kind() == ErrorKind::kEnvironment ? 0 : 2;
    }
    std::ofstream(message) << what;  // small: within the limit
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string what = contents(message);
  EXPECT_NE(what.find("disk full writing " + target.string()), std::string::npos) << what;
  EXPECT_NE(what.find("continue with --resume"), std::string::npos) << what;
  EXPECT_FALSE(std::filesystem::exists(target));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);  // only message.txt
}

TEST(DurableFile, AnUnwritableDirectoryIsAClearError) {
  try {
    write_file_durably("/proc/wattwise-no-such-dir/run-0000.csv", "x");
    FAIL() << "wrote into a missing directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("cannot write"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wattwise::store
