// Issue 22, item 3: what a client on the network can do to the exporter. Each test is one attack from the
// issue, against the server with its default limits unless the test is about a limit; "Hostile" in the
// suite's name puts them in `ctest -L hostile`.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../support/loopback_port.hpp"
#include "exporter/metrics_server.hpp"

namespace wattwise::exporter {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::string kBody = "x_up 1\n";

Endpoints endpoints() {
  return {[] { return kBody; }, [] { return true; }};
}

// A raw TCP connection to the server, for requests no well-behaved client would send.
class RawClient {
 public:
  explicit RawClient(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }
  // False once the server closed the connection (or reset it).
  bool send(const std::string& bytes) { return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) >= 0; }

  // Everything the server sends until it closes the connection or `timeout` passes; `closed` says which.
  std::string receive(std::chrono::milliseconds timeout, bool* closed = nullptr) {
    std::string out;
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd fd{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&fd, 1, static_cast<int>(left.count())) <= 0) break;
      char buffer[65536];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) {
        if (closed) *closed = true;
        return out;
      }
      out.append(buffer, static_cast<std::size_t>(n));
    }
    if (closed) *closed = false;
    return out;
  }

 private:
  int fd_;
  bool connected_ = false;
};

// A client that sends a request one byte every `gap` and never finishes it, until the test ends.
class Trickler {
 public:
  Trickler(int port, std::chrono::milliseconds gap) : client_(port) {
    thread_ = std::thread([this, gap] {
      const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
      for (std::size_t i = 0; !done_; ++i) {
        if (!client_.send(std::string(1, i < request.size() ? request[i] : 'a'))) break;
        std::this_thread::sleep_for(gap);
      }
    });
  }
  ~Trickler() {
    done_ = true;
    thread_.join();
  }
  RawClient& client() { return client_; }

 private:
  RawClient client_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

int status_of(const std::string& response) {
  if (!response.starts_with("HTTP/1.1 ") || response.size() < 12) return 0;
  return std::stoi(response.substr(9, 3));
}

// The issue: two clients trickling their requests kept /metrics and /health unanswered (2 workers, 5 s
// per read, no total).
TEST(HostileClients, TwoTricklingClientsDoNotBlindHealthOrMetrics) {
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()}, endpoints());
  server.start();
  Trickler a(server.port(), 100ms), b(server.port(), 100ms);
  std::this_thread::sleep_for(300ms);  // both hold a worker now
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(2, 0);
  const auto start = Clock::now();
  const auto health = client.Get("/health");
  const auto metrics = client.Get("/metrics");
  ASSERT_TRUE(health && metrics);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(metrics->body, kBody);
  EXPECT_LT(Clock::now() - start, 2s);
  server.stop();
}

// However slowly its bytes come, a request has one deadline from the moment a worker takes it.
TEST(HostileClients, ATricklingRequestIsCutAtItsDeadline) {
  ServerLimits limits;
  limits.request_deadline = 1000ms;
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()}, endpoints(), limits);
  server.start();
  const auto start = Clock::now();
  Trickler slow(server.port(), 50ms);  // 20 bytes a second: each read is quick, the request never ends
  bool closed = false;
  slow.client().receive(5000ms, &closed);
  EXPECT_TRUE(closed) << "the connection was still open after 5 s";
  EXPECT_LT(Clock::now() - start, 3s);
  server.stop();
}

// The issue: SIGTERM waited for a trickling client.
TEST(HostileClients, StopIsPromptWhileAClientTrickles) {
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()}, endpoints());
  server.start();
  Trickler slow(server.port(), 20ms);
  std::this_thread::sleep_for(300ms);
  const auto start = Clock::now();
  server.stop();
  EXPECT_LT(Clock::now() - start, 1s);
}

// The issue: a 1 GB POST was read whole (1.07 GB RSS). Any method but GET and HEAD is answered 405 at
// once, its body never read.
TEST(HostileClients, APostIsRefusedBeforeItsBodyIsRead) {
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()}, endpoints());
  server.start();
  for (const std::string method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    SCOPED_TRACE(method);
    RawClient client(server.port());
    ASSERT_TRUE(client.connected());
    client.send(method + " /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n");
    client.send(std::string(65536, 'b'));  // the start of the body; the rest never comes
    const std::string response = client.receive(2000ms);
    EXPECT_EQ(status_of(response), 405) << response;
    EXPECT_NE(response.find("Allow: GET, HEAD"), std::string::npos) << response;
  }
  server.stop();
}

TEST(HostileClients, AGetThatAnnouncesABodyIsRefused) {
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()}, endpoints());
  server.start();
  RawClient client(server.port());
  client.send("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n");
  EXPECT_EQ(status_of(client.receive(2000ms)), 400);
  server.stop();
}

TEST(HostileClients, HeadersBeyondTheBoundEndTheConnection) {
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()}, endpoints());
  server.start();
  RawClient client(server.port());
  client.send("GET /metrics HTTP/1.1\r\nHost: x\r\n");
  for (int i = 0; i < 200 && client.send("X-Padding: " + std::string(100, 'p') + "\r\n"); ++i) {
  }
  bool closed = false;
  const std::string response = client.receive(3000ms, &closed);
  EXPECT_TRUE(closed);
  EXPECT_NE(status_of(response), 200) << response.substr(0, 200);
  server.stop();
}

// The issue: 2,000 Range parts gave a 9.9 MB answer (each part a copy of the body).
TEST(HostileClients, ManyByteRangesAreRefusedWithoutAmplification) {
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()}, endpoints());
  server.start();
  std::string ranges = "bytes=0-";
  for (int i = 0; i < 500; ++i) ranges += ",0-";
  RawClient client(server.port());
  client.send("GET /metrics HTTP/1.1\r\nHost: x\r\nRange: " + ranges + "\r\n\r\n");
  const std::string response = client.receive(2000ms);
  EXPECT_EQ(status_of(response), 416) << response.substr(0, 300);
  EXPECT_LT(response.size(), 1000u);
  server.stop();
}

TEST(HostileClients, HeadAnswersWithoutABodyAndOneRangeStillWorks) {
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()}, endpoints());
  server.start();
  httplib::Client client("127.0.0.1", server.port());
  const auto head = client.Head("/metrics");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
  const auto part = client.Get("/metrics", {{"Range", "bytes=0-3"}});
  ASSERT_TRUE(part);
  EXPECT_EQ(part->status, 206);
  EXPECT_EQ(part->body, kBody.substr(0, 4));
  server.stop();
}

// One peer (here loopback) holds at most max_connections_per_peer workers; its next connection is closed
// unanswered, so the other workers stay free for other peers (Prometheus).
TEST(HostileClients, OnePeerHoldsAtMostItsShareOfTheWorkers) {
  ServerLimits limits;
  limits.max_connections_per_peer = 2;
  MetricsServer server({"127.0.0.1", testing::free_loopback_port()}, endpoints(), limits);
  server.start();
  Trickler a(server.port(), 100ms), b(server.port(), 100ms);
  std::this_thread::sleep_for(300ms);
  RawClient third(server.port());
  third.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  bool closed = false;
  const std::string response = third.receive(2000ms, &closed);
  EXPECT_TRUE(closed);
  EXPECT_EQ(response, "");
  server.stop();
}

}  // namespace
}  // namespace wattwise::exporter
