#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/node_source.hpp"

namespace wattwise::hw {

// Linux powercap (RAPL) zones: CPU package, DRAM, core, uncore and psys energy counters under
// /sys/class/powercap/intel-rapl:N[:M]. AMD Zen CPUs (Linux >= 5.11) appear there too, as intel-rapl:N
// named package-N (no DRAM zone). See docs/node-power.md for what is supported and why.

inline constexpr const char* kPowercapRootVariable = "WATTWISE_POWERCAP_ROOT";  // tests point it elsewhere
inline constexpr const char* kDefaultPowercapRoot = "/sys/class/powercap";

// A wrap of energy_uj is told apart only if two reads are closer than the time it takes to count the whole
// range: range / this power. 1 kW is above any one CPU package or DRAM zone we know of.
inline constexpr double kPlausibleMaxZonePowerW = 1000;

// Reads a small sysfs file into `text`; returns 0 or the errno of the failure. Injected so that tests can
// make energy_uj refuse the way Linux >= 5.10 does for non-root users even when they run as root.
using ReadSysfsFn = std::function<int(const std::filesystem::path& path, std::string& text)>;
int read_sysfs_file(const std::filesystem::path& path, std::string& text);

struct PowercapZone {
  std::string id;         // "intel-rapl:0:1"
  std::string zone_name;  // the zone's `name` file: "package-0", "dram", "core", "uncore", "psys"
  NodeKind kind = NodeKind::kCpuPackage;
  unsigned package = 0;  // N of intel-rapl:N
  std::filesystem::path dir;
  std::uint64_t max_energy_range_uj = 0;
};

struct PowercapDiscovery {
  std::vector<PowercapZone> zones;  // readable ones, packages first
  // One line each, for stderr: zones that exist but cannot be read (root-only energy_uj, a broken file).
  std::vector<std::string> warnings;
};

// The zones under `root` (absent root: none, no warning). Never throws: node power is an extra, a
// missing or unreadable zone must not fail the job.
PowercapDiscovery discover_powercap(const std::filesystem::path& root,
                                    const ReadSysfsFn& read = read_sysfs_file);

// $WATTWISE_POWERCAP_ROOT, else /sys/class/powercap.
std::filesystem::path powercap_root_from_environment();

// One zone's energy counter, unwrapped: energy_uj counts up to max_energy_range_uj and starts again at 0.
class PowercapSource final : public NodeSource {
 public:
  explicit PowercapSource(PowercapZone zone, ReadSysfsFn read = read_sysfs_file);
  std::string name() const override;
  NodeKind kind() const override { return zone_.kind; }
  std::string origin() const override;
  Nanos max_read_interval() const override;
  NodeReading read() override;

 private:
  PowercapZone zone_;
  ReadSysfsFn read_;
  bool have_last_ = false;
  std::uint64_t last_uj_ = 0;
  double unwrapped_j_ = 0;
};

std::vector<std::unique_ptr<NodeSource>> powercap_sources(const PowercapDiscovery& found,
                                                          const ReadSysfsFn& read = read_sysfs_file);

}  // namespace wattwise::hw
