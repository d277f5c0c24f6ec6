#include "core/private_dir.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"

namespace wattwise {
namespace {

// Sets TMPDIR for one test and puts the old value back.
class TmpdirSet {
 public:
  explicit TmpdirSet(const std::string& value) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    ::setenv("TMPDIR", value.c_str(), 1);
  }
  ~TmpdirSet() {
    if (old_) {
      ::setenv("TMPDIR", old_->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(PrivateDir, IsMadeForThisUserAloneAndRemovedWithItsTree) {
  std::filesystem::path path;
  {
    PrivateDir dir("wattwise-test-private", "a test directory");
    path = dir.path();
    ASSERT_TRUE(std::filesystem::is_directory(path));
    EXPECT_EQ(path.filename().string().rfind("wattwise-test-private-", 0), 0u) << path;
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u);
    std::filesystem::create_directories(path / "inner");
    std::ofstream(path / "inner" / "journal.json") << "{}";
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(PrivateDir, AnUnwritableBaseIsAnEnvironmentErrorThatSaysWhatAndWhere) {
  testing::TempDir base;
  try {
    make_private_directory(base.path() / "missing", "wattwise-x", "the marker directory");
    FAIL() << "made a directory under a missing base";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    const std::string text = e.what();
    EXPECT_NE(text.find("cannot create the marker directory in " + (base.path() / "missing").string()),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("(set TMPDIR to a writable directory)"), std::string::npos) << text;
  }
}

TEST(PrivateDir, SocketsGoUnderAShortTmpdirAndUnderTmpWhenItIsTooLong) {
  {
    TmpdirSet set("/var/tmp");
    EXPECT_EQ(socket_directory_base(), std::filesystem::path("/var/tmp"));
  }
  {
    TmpdirSet set("/" + std::string(70, 'd'));  // a socket path under it would not fit sun_path
    EXPECT_EQ(socket_directory_base(), std::filesystem::path("/tmp"));
  }
  {
    TmpdirSet set("");
    EXPECT_EQ(socket_directory_base(), std::filesystem::path("/tmp"));
  }
}

}  // namespace
}  // namespace wattwise
