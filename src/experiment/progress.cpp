#include "experiment/progress.hpp"

#include "core/text.hpp"
#include "core/units.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

namespace wattwise::experiment {

namespace {

// `path` as one word of a shell command line: as it is when it needs no quoting, else in single quotes.
std::string shell_word(const std::string& path) {
  const bool plain = !path.empty() && path.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789_-./+,:@%=") == std::string::npos;
  if (plain) return path;
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

Progress::Progress(std::FILE* out, bool rewrite_in_place) : out_(out), rewrite_in_place_(rewrite_in_place) {}

Progress Progress::for_stderr() {
  return Progress(stderr, ::isatty(STDERR_FILENO) == 1);
}

void Progress::begin(std::optional<std::size_t> total, std::size_t already_done) {
  total_known_ = total.has_value();
  total_ = total.value_or(already_done);
  done_ = already_done;
  if (already_done > 0 && total) {
    std::fprintf(out_, "wattwise: resuming: %zu of %zu runs already in the database\n", already_done, *total);
  } else if (already_done > 0) {
    std::fprintf(out_, "wattwise: resuming: %zu runs already in the database\n", already_done);
  }
}

void Progress::run_started(const std::string& setting) {
  setting_ = setting;
  run_start_ = std::chrono::steady_clock::now();
  print();
}

void Progress::run_finished(bool ok) {
  run_finished(std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count(), ok);
}

void Progress::run_finished(double run_time_s, bool ok) {
  ++done_;
  ++done_here_;
  if (!ok) ++failed_;
  run_time_sum_s_ += run_time_s;
}

void Progress::run_failed(const std::string& error) {
  if (line_open_) std::fputc('\n', out_);
  line_open_ = false;
  std::string text = fmt::format("wattwise: run {} failed ({})", setting_, error);
  if (!database_.empty())
    text += fmt::format(": `wattwise runs {} --failed` shows the end of its output", for_terminal(shell_word(database_)));
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
}

void Progress::last_run_result(std::optional<double> energy_j, double job_time_s, bool simulated) {
  simulated_ = simulated;
  // Named by its own setting: the line shows the next run's setting first, and a figure beside it without
  // a name read as that setting's (issue 22, item 11).
  last_result_ = fmt::format("last: {} used {} in {}{}", setting_, format_energy_j(energy_j),
                             format_seconds(job_time_s), simulated ? " of simulated time" : "");
}

void Progress::end() {
  if (line_open_) std::fputc('\n', out_);
  line_open_ = false;
  std::fflush(out_);
}

std::string Progress::format_eta(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string Progress::line() const {
  std::string text = total_known_
                         ? fmt::format("run {}/{} {}", std::min(done_ + 1, total_), total_, setting_)
                         : fmt::format("run {} {}", done_ + 1, setting_);
  if (!last_result_.empty()) text += " | " + last_result_;
  if (!stage_.empty()) text += " | " + stage_;
  if (failed_ > 0) text += fmt::format(" | {} failed", failed_);
  // The ETA needs at least one measured run of this invocation; the runs still to do include this one.
  // Simulated runs take no wall time worth an ETA.
  if (done_here_ > 0 && !simulated_ && total_known_) {
    const double mean_s = run_time_sum_s_ / static_cast<double>(done_here_);
    // At least this run: an adaptive sweep's run budget counts its successful runs, done_ every run, so
    // with failures done_ passes the total (total_ - done_ wrapped round: an ETA of 10^19 runs).
    const std::size_t left = total_ > done_ ? total_ - done_ : 1;
    text += " | ETA " + format_eta(mean_s * static_cast<double>(left));
  }
  return text;
}

void Progress::print() {
  if (rewrite_in_place_) {
    std::fprintf(out_, "\r%s\033[K", line().c_str());
    line_open_ = true;
  } else {
    std::fprintf(out_, "wattwise: %s\n", line().c_str());
  }
  std::fflush(out_);
}

}  // namespace wattwise::experiment
