#include "exporter/metrics_server.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <httplib.h>

#include "core/error.hpp"
#include "core/thread_name.hpp"
#include "exporter/exposition.hpp"

namespace wattwise::exporter {
namespace {

// A scrape is one request every few seconds; two workers let a /health probe pass a slow scrape.
constexpr std::size_t kWorkerThreads = 2;

Error listen_usage(const std::string& text, const std::string& why) {
  return usage_error(fmt::format("--listen {}: {} (give ADDR:PORT, e.g. 127.0.0.1:{} or :{})", text, why,
                                 kDefaultPort, kDefaultPort));
}

int parse_port(const std::string& text, const std::string& port_text) {
  int port = 0;
  const char* end = port_text.data() + port_text.size();
  const auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
  if (port_text.empty() || ec != std::errc() || ptr != end || port < 1 || port > 65535)
    throw listen_usage(text, fmt::format("'{}' is not a port from 1 to 65535", port_text));
  return port;
}

}  // namespace

ListenAddress parse_listen_address(const std::string& text) {
  ListenAddress address;
  std::string host;
  std::string port_text;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string::npos) throw listen_usage(text, "an IPv6 address needs its closing ']'");
    host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') throw listen_usage(text, "expected ':' after ']'");
      port_text = text.substr(close + 2);
      if (port_text.empty()) throw listen_usage(text, "the port is missing after ':'");
    }
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (port_text.empty()) throw listen_usage(text, "the port is missing after ':'");
    if (host.find(':') != std::string::npos) throw listen_usage(text, "write an IPv6 address in brackets");
  } else {
    host = text;
  }
  if (text.empty()) throw listen_usage(text, "empty address");
  address.host = host.empty() ? "0.0.0.0" : host;
  if (!port_text.empty()) address.port = parse_port(text, port_text);
  return address;
}

MetricsServer::MetricsServer(const ListenAddress& address, Endpoints endpoints)
    : server_(std::make_unique<httplib::Server>()), endpoints_(std::move(endpoints)) {
  const std::string where = fmt::format("{}:{}", address.host, address.port);
  // Resolve first: a name that does not resolve is the command line's fault, not the machine's.
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(address.host.c_str(), nullptr, &hints, &found); rc != 0)
    throw usage_error(
        fmt::format("--listen {}: cannot resolve '{}': {}", where, address.host, ::gai_strerror(rc)));
  ::freeaddrinfo(found);

  // httplib's default adds SO_REUSEPORT, with which a second exporter would share the port silently and
  // get half the scrapes; SO_REUSEADDR alone lets a restart bind while old connections linger in TIME_WAIT.
  server_->set_socket_options([](int fd) {
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_->new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(endpoints_.metrics(), kExpositionContentType);
  });
  const auto health = [this](const httplib::Request&, httplib::Response& response) {
    const bool ok = endpoints_.healthy();
    response.status = ok ? 200 : 503;
    response.set_content(ok ? "ok\n" : "unhealthy: the sampler is stalled or every GPU was lost\n",
                         "text/plain");
  };
  server_->Get("/health", health);
  server_->Get("/-/healthy", health);
  server_->Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("wattwise exporter: metrics at /metrics, health at /health\n", "text/plain");
  });

  errno = 0;
  if (!server_->bind_to_port(address.host, address.port)) {
    const int error = errno;
    if (error == EADDRINUSE)
      throw environment_error(
          fmt::format("--listen {}: the port is in use (stop what holds it, or pick "
                      "another port with --listen)",
                      where));
    if (error == EACCES)
      throw environment_error(
          fmt::format("--listen {}: no permission to listen there (ports below 1024 "
                      "need root; pick another port with --listen)",
                      where));
    if (error == EADDRNOTAVAIL)
      throw usage_error(
          fmt::format("--listen {}: '{}' is not an address of this machine", where, address.host));
    throw environment_error(fmt::format("--listen {}: cannot listen: {}", where,
                                        error != 0 ? std::strerror(error) : "unknown error"));
  }
  port_ = address.port;
}

MetricsServer::~MetricsServer() {
  stop();
}

void MetricsServer::start() {
  if (thread_.joinable()) return;
  thread_ = named_thread("ww-http", [this] { server_->listen_after_bind(); });
  // httplib's stop() is a no-op until the loop runs: wait for it, so a stop right after start is not lost.
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void MetricsServer::stop() {
  // Closes the listening socket; the worker pool is then shut down, which finishes queued responses.
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace wattwise::exporter
