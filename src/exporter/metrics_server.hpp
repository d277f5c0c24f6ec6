#pragma once

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

struct ListenAddress {
  std::string host;  // numeric or a name; "0.0.0.0" (every IPv4 interface) when the flag gave none
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

// The HTTP side of the exporter, on cpp-httplib: GET /metrics, /health (also /-/healthy, Prometheus' own
// spelling) and / (a line saying where the metrics are). The constructor binds the port, so a bad address
// or a port in use is reported before anything starts; serving runs on its own threads from start().
class MetricsServer {
 public:
  // Throws usage_error for an address that is not this machine's (or does not resolve), and
  // environment_error for a port in use or one that needs privileges.
  MetricsServer(const ListenAddress& address, Endpoints endpoints);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }
  void start();
  // Stops accepting, lets the responses in flight finish, joins the threads; idempotent.
  void stop();

 private:
  std::unique_ptr<httplib::Server> server_;
  Endpoints endpoints_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace wattwise::exporter
