// `wattwise exporter` as a binary, against the fake NVML: scraped over loopback with httplib's client.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include "exporter_support.hpp"

extern char** environ;

namespace wattwise::e2e {
namespace {

using namespace std::chrono_literals;

constexpr int kDefaultPort = 9467;  // exporter::kDefaultPort, where it listens without --listen

class ExporterTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    use_config(exporter_gpu_config(path("compute_pids").string()));
    port_ = free_loopback_port();
  }
  // Runs the exporter on port_ (`listen_flag` false: without --listen, so on its default port) and calls
  // `body` once it is healthy; then sends it SIGTERM.
  ProcessResult run_exporter(const std::function<void()>& body, std::vector<std::string> extra = {},
                             bool listen_flag = true) {
    std::vector<std::string> args = {"exporter"};
    if (listen_flag) args.insert(args.end(), {"--listen", "127.0.0.1:" + std::to_string(port_)});
    args.insert(args.end(), extra.begin(), extra.end());
    const int port = listen_flag ? port_ : kDefaultPort;
    SpawnOptions options;
    options.guard = 50s;
    bool done = false;
    options.while_running = [&](int pid) {
      if (done) return;
      done = true;
      if (wait_for_ok(port, "/health", 15s)) {
        body();
      } else {
        ADD_FAILURE() << "the exporter never became healthy";
      }
      ::kill(pid, SIGTERM);
    };
    return wattwise(args, options);
  }
  int port_ = 0;
};

// The counter's difference between two scrapes 15 s apart against the GPU's constant power times the time
// between them. The counter value in use at a scrape can be one posting (100 ms) old while the extension
// starts at the read, so the physics allow 300 W x 0.1 s = 30 J of 4500 J (0.67%) whatever the machine's
// load; the scrape instants are the middles of loopback requests (milliseconds).
TEST_F(ExporterTest, EnergyCounterMatchesTheGpusPowerTimesTimeWithinOnePercent) {
  const auto r = run_exporter([&] {
    // Until the first harvest (250 ms) a total has no power readings to extend the counter with: it lags.
    std::this_thread::sleep_for(1s);
    const auto first = scrape(port_);
    std::this_thread::sleep_for(15s);
    const auto second = scrape(port_);
    ASSERT_TRUE(first && second);
    const auto e1 = sample_value(first->body, "wattwise_gpu_energy_joules_total", "UUID=\"GPU-exporter-0\"");
    const auto e2 = sample_value(second->body, "wattwise_gpu_energy_joules_total", "UUID=\"GPU-exporter-0\"");
    ASSERT_TRUE(e1 && e2) << first->body;
    // Each value was computed somewhere inside its request: allow the requests' own durations on top of 1%.
    const double expected_j = kExporterGpuPowerW * (second->monotonic_s - first->monotonic_s);
    EXPECT_GE(*e2 - *e1, kExporterGpuPowerW * (second->before_s - first->after_s) - 0.01 * expected_j);
    EXPECT_LE(*e2 - *e1, kExporterGpuPowerW * (second->after_s - first->before_s) + 0.01 * expected_j);
    std::printf("exporter: %.1f J vs %.1f J expected (%+.3f%%)\n", *e2 - *e1, expected_j,
                100 * (*e2 - *e1 - expected_j) / expected_j);
  });
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ExporterTest, HealthAndMetricsAnswerAndSigtermExitsZero) {
  const auto r = run_exporter([&] {
    // The first readings reach the gauges at the first harvest (250 ms): scrape after a few.
    std::this_thread::sleep_for(1s);
    httplib::Client client("127.0.0.1", port_);
    const auto health = client.Get("/health");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    EXPECT_EQ(health->body, "ok\n");
    const auto metrics = client.Get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    EXPECT_EQ(sample_value(metrics->body, "wattwise_gpu_power_watts", "modelName=\"NVIDIA H100 PCIe\""),
              kExporterGpuPowerW);
    EXPECT_EQ(sample_value(metrics->body, "wattwise_gpu_up"), 1.0);
  });
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(r.signal.has_value());
}

// A process on the GPU started with WATTWISE_JOB_ID: the GPU's energy goes to that job from the first
// poll on (polls are 1 s apart), so the job's energy trails the GPU's by at most ~1.25 s of its power.
TEST_F(ExporterTest, AttributesTheGpusEnergyToTheJobNamedInItsProcessEnvironment) {
  const std::string sleep_path = "/bin/sleep";
  char* const argv[] = {const_cast<char*>(sleep_path.c_str()), const_cast<char*>("60"), nullptr};
  char job_env[] = "WATTWISE_JOB_ID=train \"7\"";
  char* const env[] = {job_env, nullptr};
  pid_t job = 0;
  ASSERT_EQ(::posix_spawn(&job, sleep_path.c_str(), nullptr, nullptr, argv, env), 0);
  std::ofstream(path("compute_pids")) << job << "\n";
  const auto r = run_exporter([&] {
    std::this_thread::sleep_for(3s);
    const auto s = scrape(port_);
    ASSERT_TRUE(s);
    const auto gpu_j = sample_value(s->body, "wattwise_gpu_energy_joules_total");
    const auto job_j = sample_value(s->body, "wattwise_job_energy_joules_total", R"(job_id="train \"7\"")");
    ASSERT_TRUE(gpu_j && job_j) << s->body;
    EXPECT_LE(*job_j, *gpu_j);
    EXPECT_GE(*job_j, *gpu_j - kExporterGpuPowerW * 1.5);
    EXPECT_GT(*job_j, 0);
  });
  ::kill(job, SIGKILL);
  ::waitpid(job, nullptr, 0);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Issue 22, item 3: the default was 0.0.0.0, the whole network. It is loopback now.
TEST_F(ExporterTest, WithoutListenItServesThisMachineOnly) {
  {
    httplib::Client probe("127.0.0.1", kDefaultPort);
    probe.set_connection_timeout(1, 0);
    if (probe.Get("/")) GTEST_SKIP() << "something already listens on port " << kDefaultPort;
  }
  const auto r = run_exporter([] {}, {}, /*listen_flag=*/false);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("http://127.0.0.1:9467/metrics"), std::string::npos) << r.err;
}

TEST_F(ExporterTest, PortInUseIsOneLineAndExitThree) {
  const auto first = run_exporter([&] {
    const auto second = wattwise({"exporter", "--listen", "127.0.0.1:" + std::to_string(port_)});
    EXPECT_EQ(second.exit_code, 3);
    EXPECT_NE(single_error_line(second).find("in use"), std::string::npos) << second.err;
  });
  EXPECT_EQ(first.exit_code, 0) << first.err;
}

TEST_F(ExporterTest, BadListenOrIntervalIsOneLineAndExitTwo) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"exporter", "--listen", "127.0.0.1:99999"},
        std::vector<std::string>{"exporter", "--listen", "127.0.0.1:"},
        std::vector<std::string>{"exporter", "--listen", "192.0.2.1:9467"},
        std::vector<std::string>{"exporter", "--interval", "0"}}) {
    const auto r = wattwise(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_FALSE(single_error_line(r).empty());
  }
}

}  // namespace
}  // namespace wattwise::e2e
