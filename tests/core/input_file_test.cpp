// Files a user names or another user planted (issue 22, item 5): what is not a regular file is refused with
// one line before anything is read, so a FIFO never hangs a command and a link to /dev/zero never fills
// memory. Every reader of such a file goes through these (report, analyze, runs, merge, counter --since, the
// config and footprint files, the daemon's policy, a sweep database, a runs CSV).
#include "core/input_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"

namespace wattwise {
namespace {

namespace fs = std::filesystem;

struct HostileInputFile : ::testing::Test {
  const wattwise::testing::TempDir temp{"ww-input"};
  const fs::path& dir = temp.path();

  // The call, on a thread of its own, so that a hang fails the test instead of stopping it.
  template <typename Call>
  std::string refusal_of(Call call) {
    auto done = std::async(std::launch::async, [call] {
      try {
        call();
        return std::string("accepted");
      } catch (const Error& e) {
        return std::string(e.kind() == ErrorKind::kUsage ? "usage: " : "other: ") + e.what();
      }
    });
    if (done.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      std::ofstream(dir / "fifo") << "";  // a writer ends the hang so the thread can end
      done.wait();
      return "hung";
    }
    return done.get();
  }
};

TEST_F(HostileInputFile, AFifoIsRefusedAtOnceNotWaitedOn) {
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  const auto fifo = dir / "fifo";
  EXPECT_EQ(refusal_of([&] { read_regular_file(fifo, 1 << 20, "a policy file (JSON)"); }),
            "usage: '" + fifo.string() + "' is a FIFO, not a regular file: give a policy file (JSON)");
  EXPECT_EQ(refusal_of([&] { require_regular_file(fifo, "a sweep database"); }),
            "usage: '" + fifo.string() + "' is a FIFO, not a regular file: give a sweep database");
}

TEST_F(HostileInputFile, ALinkToDevZeroIsRefusedNotReadUntilMemoryRunsOut) {
  fs::create_symlink("/dev/zero", dir / "zero.json");
  const auto zero = dir / "zero.json";
  EXPECT_EQ(refusal_of([&] { read_regular_file(zero, std::size_t{1} << 40, "a JSON config file"); }),
            "usage: '" + zero.string() + "' is a character device, not a regular file: give a JSON config file");
  EXPECT_EQ(refusal_of([&] { require_regular_file(zero, "a runs CSV"); }),
            "usage: '" + zero.string() + "' is a character device, not a regular file: give a runs CSV");
}

TEST_F(HostileInputFile, ALinkIsNotFollowedWhenAskedNotTo) {
  std::ofstream(dir / "real.json") << "{}";
  fs::create_symlink(dir / "real.json", dir / "link.json");
  EXPECT_EQ(read_regular_file(dir / "link.json", 100, "x"), "{}");
  EXPECT_EQ(refusal_of([&] { read_regular_file(dir / "link.json", 100, "x", FollowLinks::kNo); }),
            "usage: '" + (dir / "link.json").string() + "' is a symbolic link, not a regular file: give x");
}

TEST_F(HostileInputFile, ARegularFileIsReadWholeAndOneTooLargeIsADataError) {
  std::ofstream(dir / "f.json") << std::string(1000, 'x');
  EXPECT_EQ(read_regular_file(dir / "f.json", 1000, "x").size(), 1000u);
  EXPECT_NO_THROW(require_regular_file(dir / "f.json", "x"));
  EXPECT_NO_THROW(require_regular_file(dir / "absent.json", "x"));  // the caller's open says so
  try {
    read_regular_file(dir / "f.json", 999, "x");
    FAIL() << "read past its limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
  }
}

}  // namespace
}  // namespace wattwise
