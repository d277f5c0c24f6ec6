#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace wattwise::exporter {

// The port `wattwise exporter` listens on by default: not dcgm-exporter's 9400, node_exporter's 9100 or
// the OpenTelemetry Prometheus exporter's 9464, which often run on the same GPU nodes.
inline constexpr int kDefaultPort = 9467;

// Where `wattwise exporter` listens without --listen: loopback only. Serving the network is the operator's
// choice (`--listen :9467`), made knowing what it exposes (docs/operators.md, "Exposure").
inline constexpr const char* kDefaultListen = "127.0.0.1:9467";

struct ListenAddress {
  std::string host;  // numeric or a name; "0.0.0.0" (every IPv4 interface) for ":PORT"
  int port = kDefaultPort;
};

// "ADDR:PORT", ":PORT" (every interface), "[IPv6]:PORT" or "ADDR" (the default port). A port outside
// 1..65535, or text that is none of these, is a usage error naming --listen.
ListenAddress parse_listen_address(const std::string& text);

// What the server answers with; called from its worker threads, so both must be thread-safe.
struct Endpoints {
  std::function<std::string()> metrics;  // the /metrics body (text exposition 0.0.4)
  std::function<bool()> healthy;         // /health and /-/healthy: 200 when true, else 503
};

// What a client of the exporter may cost it. Anyone who can reach the port is a client, so each bound
// holds whatever the client sends (docs/operators.md, "Exposure"):
struct ServerLimits {
  // One request per connection, read and answered within this time from the moment a worker takes it,
  // however slowly its bytes trickle in; then the connection is closed.
  std::chrono::milliseconds request_deadline{5000};
  // Bytes read from a connection: the request line and headers. A body is never read.
  std::size_t max_request_bytes = 8192;
  std::size_t workers = 16;
  // Connections from one peer (one IPv4 address, one IPv6 /64, or this machine's loopback) in progress at
  // once; more are closed unanswered, so that one host cannot take every worker.
  std::size_t max_connections_per_peer = 4;
};

// The HTTP side of the exporter, on cpp-httplib: GET (and HEAD) /metrics, /health (also /-/healthy,
// Prometheus' own spelling) and / (a line saying where the metrics are); any other method is 405 before
// its body is read, and a request for several byte ranges is 416 (each part would repeat the answer).
// The constructor binds the port, so a bad address or a port in use is reported before anything starts;
// serving runs on its own threads from start().
class MetricsServer {
 public:
  // Throws usage_error for an address that is not this machine's (or does not resolve), and
  // environment_error for a port in use or one that needs privileges.
  MetricsServer(const ListenAddress& address, Endpoints endpoints, ServerLimits limits = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }
  void start();
  // Stops accepting, lets the responses in flight finish, drops the requests still being read (a client
  // trickling its request does not hold the exit up), joins the threads; idempotent.
  void stop();

  class GuardedServer;

 private:
  std::unique_ptr<GuardedServer> server_;
  Endpoints endpoints_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace wattwise::exporter
