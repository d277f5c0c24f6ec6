#include "hw/powercap.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "core/numbers.hpp"

namespace wattwise::hw {

namespace {

constexpr const char* kZonePrefix = "intel-rapl:";

std::optional<std::uint64_t> parse_uint(const std::string& text) {
  std::string_view trimmed = text;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.remove_suffix(1);
  return parse_integer<std::uint64_t>(trimmed);
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::optional<NodeKind> kind_of(const std::string& zone_name) {
  if (zone_name.rfind("package", 0) == 0) return NodeKind::kCpuPackage;
  if (zone_name == "dram") return NodeKind::kDram;
  if (zone_name == "core") return NodeKind::kCore;
  if (zone_name == "uncore") return NodeKind::kUncore;
  if (zone_name == "psys") return NodeKind::kPsys;
  return std::nullopt;
}

// "intel-rapl:0" -> package 0; "intel-rapl:0:1" -> package 0 too. Anything else (intel-rapl-mmio:0, which
// repeats package 0 through MMIO and would count it twice; the control type "intel-rapl") is not a zone.
std::optional<unsigned> package_of(const std::string& id) {
  if (id.rfind(kZonePrefix, 0) != 0) return std::nullopt;
  const std::string rest = id.substr(std::strlen(kZonePrefix));
  unsigned package = 0;
  const auto [stop, error] = std::from_chars(rest.data(), rest.data() + rest.size(), package);
  if (error != std::errc() || stop == rest.data()) return std::nullopt;
  if (stop != rest.data() + rest.size() && *stop != ':') return std::nullopt;
  return package;
}

// Zones by id. On real machines every zone, sub-zones included, is a link at the top of /sys/class/powercap,
// and sub-zones are also directories inside their package: both are looked at, each zone kept once.
std::map<std::string, std::filesystem::path> zone_directories(const std::filesystem::path& root) {
  std::map<std::string, std::filesystem::path> zones;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    const std::string id = entry.path().filename().string();
    if (!package_of(id)) continue;
    zones.emplace(id, entry.path());
    std::error_code inner;
    for (const auto& sub : std::filesystem::directory_iterator(entry.path(), inner)) {
      const std::string sub_id = sub.path().filename().string();
      if (package_of(sub_id)) zones.emplace(sub_id, sub.path());
    }
  }
  return zones;
}

bool is_permission_error(int error) {
  return error == EACCES || error == EPERM;
}

}  // namespace

int read_sysfs_file(const std::filesystem::path& path, std::string& text) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  char buffer[128];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  const int read_error = errno;
  ::close(fd);
  if (n < 0) return read_error;
  text.assign(buffer, static_cast<std::size_t>(n));
  return 0;
}

std::filesystem::path powercap_root_from_environment() {
  const char* root = std::getenv(kPowercapRootVariable);
  return root != nullptr && *root != '\0' ? std::filesystem::path(root)
                                          : std::filesystem::path(kDefaultPowercapRoot);
}

PowercapDiscovery discover_powercap(const std::filesystem::path& root, const ReadSysfsFn& read) {
  PowercapDiscovery found;
  std::vector<std::string> root_only;
  for (const auto& [id, dir] : zone_directories(root)) {
    std::string text;
    if (read(dir / "name", text) != 0) continue;  // not a zone we can name: nothing to say about it
    const std::string zone_name = trimmed(text);
    const auto kind = kind_of(zone_name);
    if (!kind) continue;
    PowercapZone zone{id, zone_name, *kind, *package_of(id), dir, 0};
    if (read(dir / "max_energy_range_uj", text) == 0) zone.max_energy_range_uj = parse_uint(text).value_or(0);
    const int error = read(dir / "energy_uj", text);
    if (is_permission_error(error)) {
      root_only.push_back((dir / "energy_uj").string());
    } else if (error != 0 || !parse_uint(text)) {
      found.warnings.push_back(
          fmt::format("wattwise: warning: cannot read {} ({}): CPU energy of this zone is left out",
                      (dir / "energy_uj").string(), error != 0 ? std::strerror(error) : "not a number"));
    } else {
      found.zones.push_back(zone);
    }
  }
  if (!root_only.empty()) {
    // Linux 5.10 made energy_uj readable by root only (CVE-2020-8694, "PLATYPUS"): say how to get it back.
    found.warnings.push_back(fmt::format(
        "wattwise: warning: CPU/DRAM energy (RAPL) is readable by root only here ({}{}): run as root, or "
        "ask an admin to `chmod o+r` those files (or add a udev rule); measuring without them",
        root_only.front(), root_only.size() > 1 ? fmt::format(" and {} more", root_only.size() - 1) : ""));
  }
  std::stable_sort(found.zones.begin(), found.zones.end(), [](const auto& a, const auto& b) {
    return std::pair(a.kind, a.package) < std::pair(b.kind, b.package);
  });
  return found;
}

PowercapSource::PowercapSource(PowercapZone zone, ReadSysfsFn read)
    : zone_(std::move(zone)), read_(std::move(read)) {}

std::string PowercapSource::name() const {
  // Packages and psys carry their own number or are unique; sub-zones are named per package.
  if (zone_.kind == NodeKind::kCpuPackage || zone_.kind == NodeKind::kPsys) return zone_.zone_name;
  return fmt::format("{}-{}", zone_.zone_name, zone_.package);
}

std::string PowercapSource::origin() const {
  return fmt::format("powercap {} energy_uj", zone_.id);
}

Nanos PowercapSource::max_read_interval() const {
  if (zone_.max_energy_range_uj == 0) return Nanos::max();
  return from_seconds(static_cast<double>(zone_.max_energy_range_uj) / 1e6 / kPlausibleMaxZonePowerW);
}

NodeReading PowercapSource::read() {
  std::string text;
  const int error = read_(zone_.dir / "energy_uj", text);
  if (error != 0) return {std::nullopt, std::nullopt, fmt::format("{}: {}", origin(), std::strerror(error))};
  const auto raw_uj = parse_uint(text);
  if (!raw_uj) return {std::nullopt, std::nullopt, fmt::format("{}: not a number", origin())};
  if (have_last_) {
    // Below the last value: the counter went past max_energy_range_uj once (reads are made often enough
    // that it cannot have gone round twice, see max_read_interval).
    const std::uint64_t delta_uj = *raw_uj >= last_uj_ ? *raw_uj - last_uj_
                                   : zone_.max_energy_range_uj > last_uj_
                                       ? zone_.max_energy_range_uj - last_uj_ + *raw_uj
                                       : *raw_uj;
    unwrapped_j_ += static_cast<double>(delta_uj) / 1e6;
  }
  have_last_ = true;
  last_uj_ = *raw_uj;
  return {unwrapped_j_, std::nullopt, ""};
}

std::vector<std::unique_ptr<NodeSource>> powercap_sources(const PowercapDiscovery& found,
                                                          const ReadSysfsFn& read) {
  std::vector<std::unique_ptr<NodeSource>> sources;
  for (const auto& zone : found.zones) sources.push_back(std::make_unique<PowercapSource>(zone, read));
  return sources;
}

}  // namespace wattwise::hw
