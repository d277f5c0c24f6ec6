#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

namespace wattwise::experiment {

// What a sweep's progress line counts its runs up to: the plan's runs (the default), a count of its own (an
// adaptive sweep that stops after so many), or none to begin with (an adaptive sweep with a time budget: the
// runs its time holds are known only once runs have taken time; Progress::set_runs_left gives them).
class ProgressTotal {
 public:
  ProgressTotal() = default;  // the plan's runs
  static ProgressTotal runs(std::size_t count) { return ProgressTotal(Kind::kCount, count); }
  static ProgressTotal unknown() { return ProgressTotal(Kind::kUnknown, 0); }
  // The count for Progress::begin, given the plan's: nullopt when unknown.
  std::optional<std::size_t> of(std::size_t plan_runs) const {
    switch (kind_) {
      case Kind::kPlan:
        return plan_runs;
      case Kind::kCount:
        return count_;
      case Kind::kUnknown:
        return std::nullopt;
    }
    return std::nullopt;
  }

 private:
  enum class Kind { kPlan, kCount, kUnknown };
  ProgressTotal(Kind kind, std::size_t count) : kind_(kind), count_(count) {}
  Kind kind_ = Kind::kPlan;
  std::size_t count_ = 0;  // for kCount
};

// The progress line of a long sweep on stderr: runs done/total, the current setting and the ETA from the
// mean run time so far. On a terminal it is rewritten in place (carriage return); anywhere else (a log
// file, CI) each update is a plain line, so the log stays readable.
class Progress {
 public:
  Progress(std::FILE* out, bool rewrite_in_place);
  // A terminal gets in-place updates; anything else plain lines.
  static Progress for_stderr();

  // `total` runs in the plan, `already_done` of them in the database before this invocation (resume).
  // nullopt: the sweep's count is not known before its runs take time (an adaptive sweep with a time
  // budget, whose plan's grid x 12 is no count of what it makes): no count until set_runs_left gives one.
  void begin(std::optional<std::size_t> total, std::size_t already_done);
  void run_started(const std::string& setting);
  // The runs still to make, the next one included, where the plan's count is not the sweep's: an adaptive
  // sweep with a time budget makes those its time left holds, not the grid x 12 it planned (the ETA's count).
  // nullopt: not known yet (a time budget before any run has taken time): the line shows no count, no ETA.
  void set_runs_left(std::optional<std::size_t> runs) {
    total_known_ = runs.has_value();
    if (runs) total_ = done_ + *runs;
  }
  // What the sweep is doing, shown after the setting until changed (an adaptive sweep: "refining EDP near
  // power_limit_w=185, 35 runs left"); "" shows nothing.
  void set_stage(std::string stage) { stage_ = std::move(stage); }
  // The run's wall time on this machine (a simulated run's virtual time would give a useless ETA).
  void run_finished(bool ok);
  void run_finished(double run_time_s, bool ok);
  // A line of its own for a failed run: its setting, why (the error column) and, once the database is
  // named, the command that shows the end of its output: "wattwise: run power_limit_w=200 failed (exit
  // status 7): `wattwise runs sweep.db --failed` shows its output".
  void run_failed(const std::string& error);
  void name_database(std::string path) { database_ = std::move(path); }
  // What the run just finished measured, shown on the following lines with its setting ("last:
  // power_limit_w=200 used 54.27 kJ in 294.98 s"). A simulated run's time is virtual: the line says so and
  // shows no ETA (its runs take no wall time). Call it before the next run_started().
  void last_run_result(std::optional<double> energy_j, double job_time_s, bool simulated);
  // Ends the in-place line so the next output starts on a fresh one.
  void end();

  // The text of the line, for tests: "run 3/10 power_limit_w=250 | last: power_limit_w=200 used 54.27 kJ in
  // 294.98 s | 1 failed | ETA 1m05s".
  std::string line() const;
  static std::string format_eta(double seconds);

 private:
  void print();

  std::FILE* out_;
  bool rewrite_in_place_;
  std::size_t total_ = 0;
  bool total_known_ = true;
  std::size_t done_ = 0;
  std::size_t done_here_ = 0;  // finished by this invocation: the ones with a measured time
  std::size_t failed_ = 0;
  double run_time_sum_s_ = 0;
  std::string setting_;
  std::string stage_;
  std::string last_result_;
  std::string database_;
  bool simulated_ = false;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point run_start_{};
};

}  // namespace wattwise::experiment
