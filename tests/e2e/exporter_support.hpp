#pragma once

// What the exporter's binary-level tests share: a free loopback port, scraping over loopback with
// httplib's client, reading one sample out of the exposition text, a GPU whose energy is known.

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "../support/loopback_port.hpp"
#include "e2e_fixture.hpp"

namespace wattwise::e2e {

inline constexpr double kExporterGpuPowerW = 300;  // the exporter tests' GPU draws this, constantly

// One fake GPU at a constant kExporterGpuPowerW; its compute processes are the pids in `pids_file`.
inline nlohmann::json exporter_gpu_config(const std::string& pids_file) {
  return {{"driver_version", "580.159.04"},
          {"gpus",
           {{{"name", "NVIDIA H100 PCIe"},
             {"uuid", "GPU-exporter-0"},
             {"pci_bus_id", "00000000:3B:00.0"},
             {"compute_pids_file", pids_file},
             {"profile", {{{"duration_s", 1.0}, {"watts", kExporterGpuPowerW}}}}}}}};
}

using testing::free_loopback_port;  // a loopback port nobody listens on now

// GETs `path` until it answers 200 or `timeout` passes; true when it did.
inline bool wait_for_ok(int port, const std::string& path, std::chrono::seconds timeout) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1, 0);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (const auto response = client.Get(path.c_str()); response && response->status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// The value of the first sample of `metric` whose line contains `label_part` (e.g. `job_id="7"`).
inline std::optional<double> sample_value(const std::string& exposition, const std::string& metric,
                                          const std::string& label_part = "") {
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with(metric + "{") && !line.starts_with(metric + " ")) continue;
    if (line.find(label_part) == std::string::npos) continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return std::nullopt;
}

// A scrape and the CLOCK_MONOTONIC instant it stands for: the middle of the request.
struct Scrape {
  std::string body;
  double monotonic_s = 0;  // the middle of the request
  double before_s = 0;     // when it was sent
  double after_s = 0;      // when its answer was in
};

inline double monotonic_now_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

inline std::optional<Scrape> scrape(int port) {
  httplib::Client client("127.0.0.1", port);
  const double before = monotonic_now_s();
  const auto response = client.Get("/metrics");
  const double after = monotonic_now_s();
  if (!response || response->status != 200) return std::nullopt;
  return Scrape{response->body, (before + after) / 2, before, after};
}

}  // namespace wattwise::e2e
