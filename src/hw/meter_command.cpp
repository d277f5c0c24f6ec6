#include "hw/meter_command.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/own_children.hpp"
#include "core/text.hpp"

extern char** environ;

namespace wattwise::hw {

namespace {

// How often a running command is looked at: its output, its end, a cancel.
constexpr int kPollSliceMs = 20;
// More than any meter's one line; a command that floods its output is cut here and then fails to parse.
constexpr std::size_t kMaxOutputBytes = 4096;

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Spawned in its own process group with default signal dispositions: a Ctrl-C at the terminal reaches the
// job, not the meter, and a kill of the group also ends what a wrapper script started.
struct Spawned {
  pid_t pid = -1;
  int stdout_fd = -1;
  int error = 0;
};

Spawned spawn(const std::vector<std::string>& argv) {
  Spawned s;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    s.error = errno;
    return s;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  s.error = ::posix_spawnp(&s.pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe_fds[1]);
  if (s.error != 0) {
    ::close(pipe_fds[0]);
    s.pid = -1;
    return s;
  }
  s.stdout_fd = pipe_fds[0];
  // Ours, not the job's: the job's clean-up must neither end nor reap it (core/own_children.hpp).
  register_own_child(s.pid);
  return s;
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
  return "ended abnormally";
}

}  // namespace

std::optional<MeterLine> parse_meter_line(const std::string& line) {
  const char* begin = line.data();
  const char* end = line.data() + line.size();
  while (begin < end && is_blank(*begin)) ++begin;
  while (end > begin && is_blank(end[-1])) --end;
  double value = 0;
  const auto [stop, error] = std::from_chars(begin, end, value);
  if (error != std::errc() || stop == begin || !std::isfinite(value) || value < 0) return std::nullopt;
  const char* unit = stop;
  while (unit < end && is_blank(*unit)) ++unit;
  if (end - unit != 1) return std::nullopt;
  if (*unit == 'J') return MeterLine{value, MeterUnit::kJoules};
  if (*unit == 'W') return MeterLine{value, MeterUnit::kWatts};
  return std::nullopt;
}

std::vector<std::string> split_meter_command(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (is_blank(c)) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) throw usage_error(fmt::format("--meter-cmd has an unclosed {} quote: close it", quote));
  if (in_word) words.push_back(word);
  if (words.empty())
    throw usage_error("--meter-cmd is empty: give the command that prints the meter's reading");
  return words;
}

bool program_exists(const std::string& program) {
  if (program.empty()) return false;
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

MeterCommand::MeterCommand(std::vector<std::string> argv, Nanos timeout)
    : argv_(std::move(argv)), timeout_(timeout) {}

std::string MeterCommand::origin() const {
  std::string unit = !unit_ ? "" : *unit_ == MeterUnit::kJoules ? ", J" : ", W";
  return fmt::format("meter `{}`{}", fmt::join(argv_, " "), unit);
}

std::string MeterCommand::run_once(std::string& output) {
  const Spawned s = spawn(argv_);
  if (s.pid < 0) return fmt::format("cannot start it ({})", std::strerror(s.error));
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  bool eof = false;
  int status = 0;
  bool exited = false;
  std::string failure;
  while (true) {
    if (!exited && ::waitpid(s.pid, &status, WNOHANG) == s.pid) exited = true;
    if (exited && eof) break;
    if (cancelled_) {
      failure = "stopped while it ran";
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      failure = fmt::format("timed out after {:.3g} s", to_seconds(timeout_));
      break;
    }
    if (eof) {
      ::usleep(kPollSliceMs * 1000);
      continue;
    }
    pollfd p{s.stdout_fd, POLLIN, 0};
    if (::poll(&p, 1, kPollSliceMs) > 0) {
      char buffer[512];
      const ssize_t n = ::read(s.stdout_fd, buffer, sizeof buffer);
      if (n > 0 && output.size() < kMaxOutputBytes) output.append(buffer, static_cast<std::size_t>(n));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) eof = true;
    }
  }
  ::close(s.stdout_fd);
  if (!exited) {
    ::kill(-s.pid, SIGKILL);
    while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  unregister_own_child(s.pid);
  if (!exited) return failure;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return exit_text(status);
  return "";
}

NodeReading MeterCommand::read() {
  std::string output;
  const std::string failure = run_once(output);
  const std::string who = fmt::format("meter command `{}`", fmt::join(argv_, " "));
  if (!failure.empty()) return {std::nullopt, std::nullopt, fmt::format("{} {}", who, failure)};
  const std::string line = output.substr(0, output.find('\n'));
  const auto parsed = parse_meter_line(line);
  if (!parsed) {
    std::string shown = for_terminal(line.substr(0, 60));
    return {std::nullopt, std::nullopt,
            fmt::format("{} printed '{}', not one line `<number> J` or `<number> W`", who, shown)};
  }
  if (unit_ && *unit_ != parsed->unit)
    return {std::nullopt, std::nullopt, fmt::format("{} switched between J and W", who)};
  unit_ = parsed->unit;
  if (parsed->unit == MeterUnit::kJoules) return {parsed->value, std::nullopt, ""};
  return {std::nullopt, parsed->value, ""};
}

}  // namespace wattwise::hw
