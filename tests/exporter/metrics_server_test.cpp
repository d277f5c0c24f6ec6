#include "exporter/metrics_server.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "../support/loopback_port.hpp"
#include "core/error.hpp"
#include "exporter/exposition.hpp"

namespace wattwise::exporter {
namespace {

ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::kInternal;  // did not throw
}

TEST(ListenAddress, ParsesHostAndPortForms) {
  EXPECT_EQ(parse_listen_address("127.0.0.1:9000").host, "127.0.0.1");
  EXPECT_EQ(parse_listen_address("127.0.0.1:9000").port, 9000);
  EXPECT_EQ(parse_listen_address(":9000").host, "0.0.0.0");
  EXPECT_EQ(parse_listen_address("[::1]:9000").host, "::1");
  EXPECT_EQ(parse_listen_address("[::1]:9000").port, 9000);
  EXPECT_EQ(parse_listen_address("localhost").port, kDefaultPort);
}

TEST(ListenAddress, RejectsBadPortsAsUsageErrors) {
  for (const char* bad :
       {"", "host:", "host:0", "host:65536", "host:90a", "host:-1", "::1:9000", "[::1", "[::1]x"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(kind_of([&] { parse_listen_address(bad); }), ErrorKind::kUsage);
  }
}

TEST(MetricsServer, ServesMetricsAndHealth) {
  std::atomic<bool> healthy = true;
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()},
                       {[] { return std::string("x_up 1\n"); }, [&] { return healthy.load(); }});
  server.start();
  httplib::Client client("127.0.0.1", server.port());
  const auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->body, "x_up 1\n");
  EXPECT_EQ(metrics->get_header_value("Content-Type"), kExpositionContentType);
  EXPECT_EQ(client.Get("/health")->status, 200);
  EXPECT_EQ(client.Get("/-/healthy")->status, 200);
  healthy = false;
  EXPECT_EQ(client.Get("/health")->status, 503);
  server.stop();
  EXPECT_FALSE(client.Get("/metrics"));  // nothing listens any more
}

TEST(MetricsServer, PortInUseIsAnEnvironmentError) {
  const int port = testing::free_loopback_port();
  MetricsServer first({"127.0.0.1", port}, {[] { return std::string(); }, [] { return true; }});
  EXPECT_EQ(kind_of([&] {
              MetricsServer second({"127.0.0.1", port}, {[] { return std::string(); }, [] { return true; }});
            }),
            ErrorKind::kEnvironment);
}

TEST(MetricsServer, AnAddressNotOfThisMachineIsAUsageError) {
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never assigned to a host.
  EXPECT_EQ(kind_of([] {
              MetricsServer s({"192.0.2.1", 9467}, {[] { return std::string(); }, [] { return true; }});
            }),
            ErrorKind::kUsage);
  EXPECT_EQ(
      kind_of([] {
        MetricsServer s({"no-such-host.invalid", 9467}, {[] { return std::string(); }, [] { return true; }});
      }),
      ErrorKind::kUsage);
}

TEST(MetricsServer, StopLetsAResponseInFlightFinish) {
  std::atomic<bool> in_handler = false;
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()},
                       {[&] {
                          in_handler = true;
                          std::this_thread::sleep_for(std::chrono::milliseconds(300));
                          return std::string("x_up 1\n");
                        },
                        [] { return true; }});
  server.start();
  int status = 0;
  std::string body;
  std::thread scraper([&] {
    if (auto response = httplib::Client("127.0.0.1", server.port()).Get("/metrics")) {
      status = response->status;
      body = response->body;
    }
  });
  while (!in_handler) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server.stop();  // SIGTERM's path: the scrape being answered still gets its whole answer
  scraper.join();
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body, "x_up 1\n");
}

TEST(MetricsServer, StopRightAfterStartReturns) {
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()},
                       {[] { return std::string(); }, [] { return true; }});
  server.start();
  server.stop();
  server.stop();  // idempotent
}

}  // namespace
}  // namespace wattwise::exporter
