#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "hw/node_source.hpp"

namespace wattwise::hw {

// An external meter read through a user command (`--meter-cmd`). The contract (docs/node-power.md): the
// command is run once per reading, prints one line `<number> J` (cumulative joules since any zero) or
// `<number> W` (watts now), and exits 0. One-shot commands fit what meters offer (`ipmitool dcmi power
// reading`, a PDU's SNMP get, a smart plug's HTTP call), and one that hangs is simply killed.
inline constexpr std::chrono::seconds kDefaultMeterTimeout{5};

enum class MeterUnit { kJoules, kWatts };

struct MeterLine {
  double value = 0;
  MeterUnit unit = MeterUnit::kWatts;
};

// `<number> J` or `<number> W`, spaces around allowed; nullopt for anything else (negative, inf, nan too).
std::optional<MeterLine> parse_meter_line(const std::string& line);

// The words of --meter-cmd, split on blanks; '...' and "..." keep blanks inside one word. No shell: no
// variables, globs or pipes (write `sh -c '...'` for those). Throws a usage error for an unclosed quote or
// an empty command.
std::vector<std::string> split_meter_command(const std::string& text);

// Whether `program` (argv[0] of the meter command) can be started: a path that is executable, or a name
// found on PATH. Checked before the job, so that a typo is a usage error rather than a meter given up.
bool program_exists(const std::string& program);

class MeterCommand final : public NodeSource {
 public:
  MeterCommand(std::vector<std::string> argv, Nanos timeout = kDefaultMeterTimeout);
  std::string name() const override { return "meter"; }
  NodeKind kind() const override { return NodeKind::kMeter; }
  std::string origin() const override;
  // Runs the command and waits for its line, at most the time-out; a command still running then is killed
  // (its whole process group).
  NodeReading read() override;
  void set_cancelled(bool cancelled) override { cancelled_ = cancelled; }

 private:
  // The command's output and its failure ("" when it exited 0 in time).
  std::string run_once(std::string& output);
  std::vector<std::string> argv_;
  Nanos timeout_;
  std::optional<MeterUnit> unit_;  // the first reading's unit; a meter may not switch
  std::atomic<bool> cancelled_{false};
};

}  // namespace wattwise::hw
