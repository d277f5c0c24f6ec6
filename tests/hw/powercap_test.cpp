// The powercap (RAPL) reader against a fake sysfs tree in a temporary directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "../support/temp_dir.hpp"
#include "hw/powercap.hpp"

namespace wattwise::hw {
namespace {

namespace fs = std::filesystem;

class PowercapTest : public ::testing::Test {
 protected:
  // A zone as Linux lays it out: a directory with name, energy_uj and max_energy_range_uj.
  fs::path zone(const std::string& id, const std::string& name, std::uint64_t energy_uj,
                std::uint64_t range_uj = 262143328850, const fs::path& parent = {}) {
    const fs::path dir = (parent.empty() ? root_ : parent) / id;
    fs::create_directories(dir);
    write(dir / "name", name + "\n");
    write(dir / "energy_uj", std::to_string(energy_uj) + "\n");
    write(dir / "max_energy_range_uj", std::to_string(range_uj) + "\n");
    return dir;
  }
  static void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

  const wattwise::testing::TempDir temp_{"ww-powercap"};
  const fs::path& root_ = temp_.path();
};

TEST_F(PowercapTest, FindsPackagesAndTheirSubZonesByName) {
  const auto package0 = zone("intel-rapl:0", "package-0", 1000);
  zone("intel-rapl:0:0", "core", 10, 262143328850, package0);
  zone("intel-rapl:0:1", "dram", 20, 262143328850, package0);
  zone("intel-rapl:1", "package-1", 2000);
  zone("intel-rapl:1:0", "dram", 30);  // a sub-zone seen only at the top, as the links in /sys/class/powercap
  const auto found = discover_powercap(root_);
  ASSERT_EQ(found.zones.size(), 5u);
  EXPECT_TRUE(found.warnings.empty());
  auto sources = powercap_sources(found);
  std::vector<std::string> names;
  for (const auto& s : sources) names.push_back(s->name() + ":" + to_string(s->kind()));
  EXPECT_EQ(names, (std::vector<std::string>{"package-0:cpu_package", "package-1:cpu_package", "dram-0:dram",
                                             "dram-1:dram", "core-0:core"}));
}

TEST_F(PowercapTest, AmdPackageZoneIsACpuPackage) {
  // AMD Zen (Linux >= 5.11) appears under the intel-rapl control type with a package-N zone, no DRAM.
  zone("intel-rapl:0", "package-0", 5000, 4294967295);
  const auto found = discover_powercap(root_);
  ASSERT_EQ(found.zones.size(), 1u);
  EXPECT_EQ(found.zones[0].kind, NodeKind::kCpuPackage);
}

TEST_F(PowercapTest, MmioDuplicateAndUnknownZonesAreLeftOut) {
  zone("intel-rapl:0", "package-0", 1000);
  zone("intel-rapl-mmio:0", "package-0", 1000);  // the same package through MMIO: would count it twice
  zone("intel-rapl:0:2", "gizmo", 1);
  EXPECT_EQ(discover_powercap(root_).zones.size(), 1u);
}

TEST_F(PowercapTest, MissingRootFindsNothingAndSaysNothing) {
  const auto found = discover_powercap(root_ / "absent");
  EXPECT_TRUE(found.zones.empty());
  EXPECT_TRUE(found.warnings.empty());
}

TEST_F(PowercapTest, ReadsEnergyDifferencesInJoules) {
  const auto dir = zone("intel-rapl:0", "package-0", 5'000'000);
  PowercapSource source(discover_powercap(root_).zones.at(0));
  ASSERT_EQ(source.read().energy_j, 0.0);
  write(dir / "energy_uj", "7500000\n");
  EXPECT_DOUBLE_EQ(*source.read().energy_j, 2.5);
}

TEST_F(PowercapTest, CounterWrapAddsTheRestOfTheRange) {
  const std::uint64_t range_uj = 10'000'000;  // 10 J
  const auto dir = zone("intel-rapl:0", "package-0", 9'000'000, range_uj);
  PowercapSource source(discover_powercap(root_).zones.at(0));
  source.read();
  write(dir / "energy_uj", "500000\n");  // went past 10 J: 1 J to the end of the range, 0.5 J after it
  EXPECT_DOUBLE_EQ(*source.read().energy_j, 1.5);
  write(dir / "energy_uj", "2500000\n");
  EXPECT_DOUBLE_EQ(*source.read().energy_j, 3.5);
}

TEST_F(PowercapTest, ReadIntervalIsShortEnoughToSeeEveryWrap) {
  zone("intel-rapl:0", "package-0", 0, 262143328850);  // a common Intel range: 262 kJ
  PowercapSource source(discover_powercap(root_).zones.at(0));
  EXPECT_NEAR(to_seconds(source.max_read_interval()), 262143328850 / 1e6 / kPlausibleMaxZonePowerW, 1e-6);
}

TEST_F(PowercapTest, RootOnlyEnergyGivesOneLineSayingHowToGetIt) {
  zone("intel-rapl:0", "package-0", 1000);
  zone("intel-rapl:0:0", "dram", 1000);
  // Linux >= 5.10 makes energy_uj 0400: injected, since a test running as root could still read it.
  const ReadSysfsFn refuse_energy = [](const fs::path& path, std::string& text) {
    if (path.filename() == "energy_uj") return EACCES;
    return read_sysfs_file(path, text);
  };
  const auto found = discover_powercap(root_, refuse_energy);
  EXPECT_TRUE(found.zones.empty());
  ASSERT_EQ(found.warnings.size(), 1u);
  const std::string& line = found.warnings[0];
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("root only"), std::string::npos) << line;
  EXPECT_NE(line.find("run as root"), std::string::npos) << line;
  EXPECT_NE(line.find("chmod o+r"), std::string::npos) << line;
  EXPECT_NE(line.find("and 1 more"), std::string::npos) << line;
}

TEST_F(PowercapTest, RootOnlyFileOnDiskIsReportedForNonRoot) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root, which reads a 0400 file: see the injected case";
  const auto dir = zone("intel-rapl:0", "package-0", 1000);
  // On a real node the file is 0400 and root's; a file of ours without any read bit refuses us the same way.
  fs::permissions(dir / "energy_uj", fs::perms::none);
  const auto found = discover_powercap(root_);
  EXPECT_TRUE(found.zones.empty());
  ASSERT_EQ(found.warnings.size(), 1u);
  EXPECT_NE(found.warnings[0].find("root only"), std::string::npos);
}

TEST_F(PowercapTest, GarbledCounterIsAFailedReadingNotACrash) {
  const auto dir = zone("intel-rapl:0", "package-0", 1000);
  PowercapSource source(discover_powercap(root_).zones.at(0));
  write(dir / "energy_uj", "oops\n");
  const auto reading = source.read();
  EXPECT_FALSE(reading.energy_j);
  EXPECT_NE(reading.error.find("not a number"), std::string::npos);
}

TEST_F(PowercapTest, RootComesFromTheEnvironment) {
  ::setenv(kPowercapRootVariable, root_.c_str(), 1);
  EXPECT_EQ(powercap_root_from_environment(), root_);
  ::unsetenv(kPowercapRootVariable);
  EXPECT_EQ(powercap_root_from_environment(), fs::path(kDefaultPowercapRoot));
}

}  // namespace
}  // namespace wattwise::hw
