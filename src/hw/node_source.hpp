#pragma once

#include <optional>
#include <string>

#include "core/clock.hpp"

namespace wattwise::hw {

// What a node source measures. CPU package and DRAM are summed into the node totals; core and uncore lie
// inside a package (shown, never added again); psys is the whole platform as the CPU sees it (laptops,
// some servers); the meter is whatever the user's command reads (a wall meter, a PDU, the BMC).
enum class NodeKind { kCpuPackage, kDram, kCore, kUncore, kPsys, kMeter };

// Stable names for JSON and the results database ("cpu_package", "dram", ...).
std::string to_string(NodeKind kind);

// One reading. A source gives either a cumulative energy (`energy_j`, since an arbitrary zero, already
// unwrapped) or an instantaneous power (`power_w`); an absent reading is a failed one, with the reason.
struct NodeReading {
  std::optional<double> energy_j;
  std::optional<double> power_w;
  std::string error;  // why there is no reading; empty when there is one
};

// A source of node power beside the GPUs: a powercap (RAPL) zone or an external meter. Read from the node
// sampler's own thread only.
class NodeSource {
 public:
  virtual ~NodeSource() = default;
  virtual std::string name() const = 0;  // unique among the sources, e.g. "package-0", "dram-0", "meter"
  virtual NodeKind kind() const = 0;
  virtual std::string origin() const = 0;  // where the figure comes from, for people
  // The longest gap between two reads that still tells every counter wrap apart; max(): no limit.
  virtual Nanos max_read_interval() const { return Nanos::max(); }
  virtual NodeReading read() = 0;
  // From another thread: while set, a read in flight returns at once without a reading (a meter command
  // is killed), and so does any read.
  virtual void set_cancelled(bool /*cancelled*/) {}
};

}  // namespace wattwise::hw
