// A sweep's runs keep the end of their job's stdout and stderr (issue 22, item 11): before, a failed run
// said only "exit status 7". The job's output still reaches wattwise's own streams, whole.
#include "workload/output_tail.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "../support/temp_dir.hpp"
#include "workload/process.hpp"

namespace wattwise::workload {
namespace {

struct TempFile {
  wattwise::testing::TempDir dir{"ww-tail"};
  std::filesystem::path path = dir / "output";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ~TempFile() { ::close(fd); }
  std::string text() const {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

// Runs `script` with its stdout and stderr through tees in front of two files.
struct TeedRun {
  TempFile out, err;
  StreamTail stdout_tail, stderr_tail;
  int exit_code = -1;
  double finish_s = 0;
  explicit TeedRun(const std::string& script) {
    OutputTee out_tee(out.fd), err_tee(err.fd);
    LaunchSpec spec{{"sh", "-c", script}, {}, std::nullopt};
    spec.stdout_fd = out_tee.write_fd();
    spec.stderr_fd = err_tee.write_fd();
    Process job = Process::start(spec);
    out_tee.close_write_end();
    err_tee.close_write_end();
    exit_code = job.wait();
    const auto before = std::chrono::steady_clock::now();
    stdout_tail = out_tee.finish();
    stderr_tail = err_tee.finish();
    finish_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  }
};

TEST(OutputTee, KeepsTheLast64KiBOfEachStreamAndPassesEveryByteOn) {
  // 200,000 bytes on stdout (numbered lines), a short reason on stderr, exit 7.
  TeedRun run("i=0; while [ $i -lt 20000 ]; do printf '%09d\\n' $i; i=$((i+1)); done; "
              "echo 'CUDA out of memory' >&2; exit 7");
  EXPECT_EQ(run.exit_code, 7);
  EXPECT_EQ(run.stdout_tail.bytes, 200000u);
  EXPECT_EQ(run.stdout_tail.tail.size(), kOutputTailBytes);
  EXPECT_TRUE(run.stdout_tail.truncated());
  EXPECT_EQ(run.stdout_tail.tail.substr(run.stdout_tail.tail.size() - 10), "000019999\n");
  EXPECT_EQ(run.stderr_tail.tail, "CUDA out of memory\n");
  EXPECT_FALSE(run.stderr_tail.truncated());
  // The terminal (here a file) got all of it, in order.
  const std::string passed = run.out.text();
  EXPECT_EQ(passed.size(), 200000u);
  EXPECT_EQ(passed.substr(0, 10), "000000000\n");
  EXPECT_EQ(run.err.text(), "CUDA out of memory\n");
}

TEST(OutputTee, BytesThatAreNotTextAreKeptAsWritten) {
  TeedRun run("printf 'a\\000b\\377\\033[2J'");
  EXPECT_EQ(run.stdout_tail.tail, std::string("a\0b\xff\x1b[2J", 8));
  EXPECT_EQ(run.stdout_tail.bytes, 8u);
}

// A reader of wattwise's output that went away (`wattwise sweep ... | head -1`) ends neither wattwise (no
// SIGPIPE) nor the tail.
TEST(OutputTee, ATargetThatWentAwayStillKeepsTheTail) {
  int target[2];
  ASSERT_EQ(::pipe(target), 0);
  ::close(target[0]);
  {
    OutputTee tee(target[1]);
    LaunchSpec spec{{"sh", "-c", "echo first; echo last"}, {}, std::nullopt};
    spec.stdout_fd = tee.write_fd();
    Process job = Process::start(spec);
    tee.close_write_end();
    EXPECT_EQ(job.wait(), 0);
    EXPECT_EQ(tee.finish().tail, "first\nlast\n");
  }
  ::close(target[1]);
}

TEST(OutputTee, NothingWrittenIsAnEmptyTailNotTruncated) {
  TeedRun run("exit 0");
  EXPECT_EQ(run.stdout_tail.bytes, 0u);
  EXPECT_TRUE(run.stdout_tail.tail.empty());
  EXPECT_FALSE(run.stdout_tail.truncated());
  EXPECT_LT(run.finish_s, 1.0);
}

}  // namespace
}  // namespace wattwise::workload
