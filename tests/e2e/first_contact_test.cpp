// Issue 22, what a new user and a hostile neighbour hit first: outputs written through, never replaced (a
// device, a link, a FIFO, a descriptor); special files refused with one line; options that end at the job's
// command; merge on hostile files; stdout's lines ahead of the stderr line that follows them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

namespace fs = std::filesystem;

constexpr int kUsage = 2;
constexpr int kData = 4;

std::string file_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

mode_t kind_of(const fs::path& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 ? (info.st_mode & S_IFMT) : 0;
}

class FirstContactTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    use_config(two_gpu_config());
    env_["WATTWISE_STATE_DIR"] = path("state").string();
  }

  // A short simulated measurement writing its JSON to `json_path`.
  std::vector<std::string> measure_json_to(const std::string& json_path) const {
    return {"measure", "--simulate", "v100:resnet50", "--epochs", "1", "--json", json_path};
  }

  // wattwise run by /bin/sh with `redirections` after it, e.g. "3>out.json".
  ProcessResult wattwise_in_shell(const std::vector<std::string>& args, const std::string& redirections) {
    std::vector<std::string> argv = {"/bin/sh", "-c", "\"$0\" \"$@\" " + redirections, WATTWISE_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  }
};

// Failed before: the output was written to a temporary file renamed over the path, so root's
// `-o /dev/null` made /dev/null a regular file. A device node of our own (the same as /dev/null), so that a
// failure here cannot break the machine's.
TEST_F(FirstContactTest, ADeviceOutputIsWrittenThroughAndStaysADevice) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a device node needs root";
  const auto null = path("null");
  ASSERT_EQ(::mknod(null.c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0) << std::strerror(errno);
  auto args = measure_json_to(null.string());
  args.insert(args.end(), {"-o", null.string()});
  const auto r = wattwise(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(kind_of(null), S_IFCHR) << "the device was replaced";
}

TEST_F(FirstContactTest, ALinkStaysALinkAndTheFileItNamesGetsTheOutput) {
  const auto real = path("real.json");
  std::ofstream(real) << "old\n";
  fs::create_symlink(real, path("link.json"));
  const auto r = wattwise(measure_json_to(path("link.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(kind_of(path("link.json")), S_IFLNK) << "the link was replaced by a file";
  EXPECT_EQ(nlohmann::json::parse(file_text(real)).at("backend"), "simulated");
  // Nothing else is left beside them (no temporary file).
  EXPECT_FALSE(std::any_of(fs::directory_iterator(dir_), fs::directory_iterator(), [](const auto& entry) {
    return entry.path().filename().string().find(".tmp-") != std::string::npos;
  }));
}

TEST_F(FirstContactTest, AFifoWithAReaderGetsTheOutputAndStaysAFifo) {
  const auto fifo = path("out.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    const int fd = ::open(fifo.c_str(), O_RDONLY);  // waits for a writer
    if (fd < 0) return;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) received.append(buffer, n);
    ::close(fd);
  });
  const auto r = wattwise(measure_json_to(fifo.string()));
  // If wattwise never opened the FIFO, the reader still waits in open(): a writer of our own lets it end.
  const int unblock = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  if (unblock >= 0) ::close(unblock);
  reader.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(kind_of(fifo), S_IFIFO) << "the FIFO was replaced";
  ASSERT_FALSE(received.empty()) << "the reader got nothing";
  EXPECT_EQ(nlohmann::json::parse(received).at("backend"), "simulated");
}

// `--json /dev/fd/3` as `--json >(jq .)` passes it: the descriptor is written, to a file or into a pipe.
TEST_F(FirstContactTest, ADescriptorPathWritesThatDescriptor) {
  const auto to_file =
      wattwise_in_shell(measure_json_to("/dev/fd/3"), "3>'" + path("fd3.json").string() + "'");
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_EQ(nlohmann::json::parse(file_text(path("fd3.json"))).at("backend"), "simulated");

  const auto to_pipe = wattwise_in_shell(measure_json_to("/dev/fd/3"),
                                         "3>&1 >/dev/null | cat > '" + path("piped.json").string() + "'");
  ASSERT_EQ(to_pipe.exit_code, 0) << to_pipe.err;
  EXPECT_EQ(nlohmann::json::parse(file_text(path("piped.json"))).at("backend"), "simulated");
}

// Failed before: --batch 128 and --seed 4 were taken by wattwise (and -c refused), the job ran without them.
TEST_F(FirstContactTest, OptionsEndAtTheJobsCommandAsWithPerfStat) {
  const auto args_file = path("args.txt").string();
  const auto r = wattwise({"measure", "--gpus", "1", "/bin/sh", "-c", "printf '%s ' \"$@\" > " + args_file,
                           "job", "--batch", "128", "--seed", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(file_text(args_file), "--batch 128 --seed 4 ");
}

TEST_F(FirstContactTest, SweepTakesAParamAndThenACommandWithItsOwnFlags) {
  const auto args_file = path("args.txt").string();
  SpawnOptions options;
  options.guard = std::chrono::seconds(50);
  const auto r = wattwise(
      {"sweep", "--read-only", "--cooldown", "0", "--gpus", "1", "--db", path("s.db").string(), "--param",
       "batch=32,64", "/bin/sh", "-c", "echo \"$@\" >> " + args_file, "job", "--batch", "{batch}"},
      options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = read_lines("args.txt");
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"--batch 32", "--batch 64"}));
}

TEST_F(FirstContactTest, SimulatedJobFlagsWithoutSimulateAreRefused) {
  const std::vector<std::vector<std::string>> cases = {
      {"measure", "--epochs", "3", "--batch", "128", "--", "/bin/true"},
      {"measure", "--seed", "4", "--", "/bin/true"},
      {"sweep", "--read-only", "--param", "a=1,2", "--samples", "5", "--", "/bin/true"},
      {"tune", "--iterations", "10", "--", "/bin/true"}};
  for (const auto& args : cases) {
    const auto r = wattwise(args);
    EXPECT_EQ(r.exit_code, kUsage) << args[1] << "\n" << r.err;
    EXPECT_NE(single_error_line(r).find("requires --simulate"), std::string::npos) << r.err;
  }
  // With --simulate they still set the simulated job.
  const auto r = wattwise({"measure", "--simulate", "v100:resnet50", "--epochs", "1", "--batch", "64",
                           "--json", path("m.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Failed before: a FIFO hung `report` and `analyze` (and a config file that is one, every command); a link
// to /dev/zero grew until memory ran out.
TEST_F(FirstContactTest, WhatIsNotARegularFileIsRefusedWithOneLine) {
  SpawnOptions quick;
  quick.guard = std::chrono::seconds(10);
  ASSERT_EQ(::mkfifo(path("f.db").c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", path("zero.db"));
  for (const char* command : {"report", "analyze"}) {
    for (const auto& [input, kind] : {std::pair{"f.db", "is a FIFO"}, {"zero.db", "is a character device"}}) {
      const auto r = wattwise({command, path(input).string()}, quick);
      EXPECT_FALSE(r.killed_by_guard) << command << " " << input << " hung";
      EXPECT_EQ(r.exit_code, kUsage) << command << " " << input << "\n" << r.err;
      EXPECT_NE(single_error_line(r).find(kind), std::string::npos) << r.err;
    }
  }
  fs::create_directories(path("config/wattwise"));
  ASSERT_EQ(::mkfifo(path("config/wattwise/config.json").c_str(), 0600), 0);
  const auto r = wattwise({"measure", "--simulate", "v100:resnet50", "--epochs", "1"}, quick);
  EXPECT_FALSE(r.killed_by_guard) << "a config file that is a FIFO hung measure";
  EXPECT_EQ(r.exit_code, kUsage) << r.err;
  EXPECT_NE(single_error_line(r).find("config.json' is a FIFO, not a regular file"), std::string::npos)
      << r.err;
}

// Failed before: 100,000-deep JSON in the directory was a segfault (exit 139).
TEST_F(FirstContactTest, MergeOfADeeplyNestedFileIsOneDataErrorNamingIt) {
  fs::create_directories(path("out"));
  std::ofstream(path("out/deep.json")) << std::string(100000, '[') << std::string(100000, ']');
  const auto r = wattwise({"merge", path("out").string()});
  EXPECT_EQ(r.exit_code, kData) << r.err;
  const auto line = single_error_line(r);
  EXPECT_NE(line.find("deep.json"), std::string::npos) << line;
  EXPECT_NE(line.find("nested deeper than"), std::string::npos) << line;
}

// Failed before: stdout, a file, was flushed at exit, after "wattwise: sweep complete" on stderr.
TEST_F(FirstContactTest, StdoutLinesComeBeforeTheStderrLineThatFollowsThem) {
  const auto both = path("both.txt").string();
  const auto r = wattwise_in_shell({"sweep", "--simulate", "v100:resnet50", "--power-limit", "150,250",
                                    "--samples", "2000", "--db", path("s.db").string()},
                                   "> '" + both + "' 2>&1");
  ASSERT_EQ(r.exit_code, 0) << file_text(both);
  const auto lines = read_lines("both.txt");
  const auto results =
      std::find_if(lines.begin(), lines.end(), [](const auto& l) { return l.starts_with("results: "); });
  const auto complete = std::find_if(lines.begin(), lines.end(),
                                     [](const auto& l) { return l.starts_with("wattwise: sweep complete"); });
  ASSERT_NE(results, lines.end()) << file_text(both);
  ASSERT_NE(complete, lines.end()) << file_text(both);
  EXPECT_LT(results - lines.begin(), complete - lines.begin()) << file_text(both);
}

// Issue 22, item 5, every other command that reads a file the user names: a FIFO (no writer: a read would
// wait for ever) and a link to /dev/zero (a read would never end) are refused at once, with one line naming
// the file and what it is, exit 2. Before: `counter --since` and `sweep --resume --db` hung on the FIFO and
// read /dev/zero until memory ran out; `--simulate csv:` and `runs` likewise through the store's reader.
TEST_F(FirstContactTest, HostileSpecialFilesAreRefusedByEveryReaderWithOneLine) {
  SpawnOptions quick;
  quick.guard = std::chrono::seconds(10);
  ASSERT_EQ(::mkfifo(path("fifo.db").c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", path("zero.db"));
  const std::vector<std::vector<std::string>> commands = {
      {"runs", "IN"},
      {"runs", "IN", "--failed"},
      {"analyze", "IN"},
      {"report", "IN"},
      {"report", "IN", "--format", "md"},
      {"counter", "--since", "IN"},
      {"sweep", "--resume", "--db", "IN"},
      {"measure", "--simulate", "csv:IN"},
      {"sweep", "--simulate", "csv:IN", "--power-limit", "200,250", "--db", path("new.db").string()},
  };
  for (const auto& [input, kind] : {std::pair{"fifo.db", "is a FIFO, not a regular file"},
                                    {"zero.db", "is a character device, not a regular file"}}) {
    for (auto args : commands) {
      for (auto& arg : args)
        if (auto at = arg.find("IN"); at != std::string::npos) arg.replace(at, 2, path(input).string());
      std::string what;
      for (const auto& arg : args) what += arg + " ";
      const auto r = wattwise(args, quick);
      EXPECT_FALSE(r.killed_by_guard) << what << " hung";
      EXPECT_EQ(r.exit_code, kUsage) << what << "\n" << r.err;
      const auto line = single_error_line(r);
      EXPECT_NE(line.find(path(input).string() + "' " + kind), std::string::npos) << what << "\n" << r.err;
    }
  }
  EXPECT_FALSE(fs::exists(path("new.db")));
}

// Issue 22, item 1 for the other output flags: `--trace` and `report --format md -o` into a link write the
// file it names and leave the link a link (before: each was replaced by a regular file).
TEST_F(FirstContactTest, TraceAndReportOutputsWriteThroughALinkToo) {
  std::ofstream(path("trace-real.csv")) << "old\n";
  std::ofstream(path("report-real.md")) << "old\n";
  fs::create_symlink(path("trace-real.csv"), path("trace.csv"));
  fs::create_symlink(path("report-real.md"), path("report.md"));
  const auto m = wattwise({"measure", "--simulate", "v100:resnet50", "--epochs", "1", "--trace",
                           path("trace.csv").string()});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(kind_of(path("trace.csv")), S_IFLNK) << "the trace's link was replaced by a file";
  EXPECT_NE(file_text(path("trace-real.csv")).find("time_s,gpu,energy_mj"), std::string::npos);
  const auto s = wattwise({"sweep", "--simulate", "v100:resnet50", "--power-limit", "150,250", "--samples", "2000",
                           "--db", path("s.db").string()});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const auto r = wattwise({"report", path("s.db").string(), "--format", "md", "-o", path("report.md").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(kind_of(path("report.md")), S_IFLNK) << "the report's link was replaced by a file";
  EXPECT_NE(file_text(path("report-real.md")).find("power_limit_w"), std::string::npos);
}

}  // namespace
}  // namespace wattwise::e2e
