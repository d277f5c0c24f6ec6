#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/flag_values.hpp"
#include "cli/gpu_selection.hpp"
#include "cli/gpu_system.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "exporter/metrics_server.hpp"
#include "exporter/node_collector.hpp"
#include "safety/read_only_gpu.hpp"
#include "workload/stop_signals.hpp"

namespace wattwise::cli {
namespace {

struct ExporterFlags {
  std::string listen = exporter::kDefaultListen;
  std::string gpus = "all";
  std::string interval_ms = "100";  // the instantaneous power changes every ~100 ms
  std::string hostname;             // empty: this machine's name
};

std::string this_hostname() {
  char host[256] = {};
  return ::gethostname(host, sizeof host - 1) == 0 ? std::string(host) : std::string("unknown");
}

// Blocks until SIGINT, SIGTERM or SIGHUP arrives (StopSignals' self-pipe).
void wait_for_stop_signal() {
  pollfd fd{workload::StopSignals::wake_fd(), POLLIN, 0};
  while (!workload::StopSignals::stop_requested()) {
    if (::poll(&fd, 1, -1) < 0 && errno != EINTR)
      throw Error(ErrorKind::kInternal, "poll on the stop signals failed");
  }
}

int run_exporter(const ExporterFlags& flags) {
  // Every flag is checked before the driver is touched.
  const exporter::ListenAddress address = exporter::parse_listen_address(flags.listen);
  exporter::CollectorOptions options;
  options.sampler.fast_period = parse_duration("--interval", flags.interval_ms, DurationUnit::kMilliseconds,
                                               kMinIntervalMs, kMaxIntervalMs);
  options.hostname = flags.hostname.empty() ? this_hostname() : flags.hostname;

  const workload::StopSignals signals;
  std::unique_ptr<hw::GpuSystem> real = open_real_gpus();
  // The exporter only reads: no code path of it can change a GPU setting.
  safety::ReadOnlyGpuSystem system(*real);
  std::vector<hw::GpuReadings*> gpus;
  for (const std::size_t position : select_gpus(system, flags.gpus)) gpus.push_back(&system.gpu(position));

  MonotonicClock clock;
  exporter::NodeCollector collector(gpus, clock, options);
  exporter::MetricsServer server(
      address, {[&collector] { return collector.metrics_text(); }, [&collector] { return collector.healthy(); }});
  collector.start();
  server.start();
  std::fprintf(stderr,
               "wattwise: exporter serving %zu GPU(s) at http://%s:%d/metrics (SIGTERM or Ctrl-C stops it)\n",
               gpus.size(), address.host.c_str(), server.port());
  wait_for_stop_signal();
  // A scrape in flight gets its answer; then sampling stops.
  server.stop();
  collector.stop();
  return 0;
}

void add_exporter_flags(CLI::App& app, ExporterFlags& flags) {
  app.add_option("--listen", flags.listen,
                 fmt::format("ADDR:PORT to serve /metrics and /health on (default {}, this machine only; "
                             ":{} serves every interface)",
                             exporter::kDefaultListen, exporter::kDefaultPort));
  app.add_option("--gpus", flags.gpus, "GPUs to export: comma list of indices or UUIDs, or all (default)");
  app.add_option("--interval", flags.interval_ms,
                 "period of power and telemetry readings, ms, 1 to 10000 (default 100)");
  app.add_option("--hostname", flags.hostname, "the Hostname label (default: this machine's name)");
}

}  // namespace
}  // namespace wattwise::cli

// `wattwise exporter ARGS` runs this program (wattwise-exporter, installed beside wattwise): the HTTP
// library and the OpenSSL it is built with cost every process that loads them ~10 ms at start, which the
// other commands must not pay (a stop signal in their first milliseconds must find their handler).
int main(int argc, char** argv) {
  using namespace wattwise;
  CLI::App app{"wattwise exporter: serve the GPUs' energy, power, clocks and per-job energy to Prometheus"};
  app.name("wattwise exporter");
  cli::ExporterFlags flags;
  cli::add_exporter_flags(app, flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "wattwise: %s (see `wattwise exporter --help`)\n", e.what());
    return static_cast<int>(ErrorKind::kUsage);
  }
  try {
    return cli::run_exporter(flags);
  } catch (const Error& e) {
    std::fprintf(stderr, "wattwise: %s\n", for_terminal(e.what()).c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wattwise: internal error: %s (please report it)\n", for_terminal(e.what()).c_str());
    return static_cast<int>(ErrorKind::kInternal);
  }
}
