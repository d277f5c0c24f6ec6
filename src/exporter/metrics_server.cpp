#include "exporter/metrics_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <httplib.h>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/thread_name.hpp"
#include "exporter/exposition.hpp"

namespace wattwise::exporter {
namespace {

using SteadyClock = std::chrono::steady_clock;

Error listen_usage(const std::string& text, const std::string& why) {
  return usage_error(fmt::format("--listen {}: {} (give ADDR:PORT, e.g. 127.0.0.1:{} or :{})", text, why,
                                 kDefaultPort, kDefaultPort));
}

int parse_port(const std::string& text, const std::string& port_text) {
  const auto port = parse_integer<int>(port_text);
  if (!port || *port < 1 || *port > 65535)
    throw listen_usage(text, fmt::format("'{}' is not a port from 1 to 65535", port_text));
  return *port;
}

// The peer a connection counts against: an IPv4 address, an IPv6 /64 (one host may own all of it), or
// "loopback" for the whole of 127/8 and ::1 (a local user may send from any of them).
std::string peer_key(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "unknown";
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    if ((ntohl(v4.sin_addr.s_addr) >> 24) == 127) return "loopback";
    ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    return text;
  }
  if (address.ss_family == AF_INET6) {
    auto v6 = reinterpret_cast<const sockaddr_in6&>(address).sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return "loopback";
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      if (v6.s6_addr[12] == 127) return "loopback";
      in_addr v4{};
      std::memcpy(&v4, &v6.s6_addr[12], sizeof v4);
      ::inet_ntop(AF_INET, &v4, text, sizeof text);
      return text;
    }
    std::fill(std::begin(v6.s6_addr) + 8, std::end(v6.s6_addr), 0);
    ::inet_ntop(AF_INET6, &v6, text, sizeof text);
    return std::string(text) + "/64";
  }
  return "unknown";
}

std::string address_text(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address).sin_addr, text, sizeof text);
  if (address.ss_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(address).sin6_addr, text, sizeof text);
  return text;
}

int address_port(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  return 0;
}

// One connection as httplib reads and writes it, with what httplib's own socket stream lacks: one deadline
// for the whole exchange (its timeouts are per read, so a client sending a byte a second is never timed
// out), a bound on the bytes read, and a stop descriptor that ends a read at once when the server stops.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int fd, SteadyClock::time_point deadline, std::size_t max_read_bytes, int stop_fd)
      : fd_(fd), deadline_(deadline), max_read_bytes_(max_read_bytes), stop_fd_(stop_fd) {}

  bool is_readable() const override { return wait(POLLIN, true); }
  bool is_writable() const override { return wait(POLLOUT, false); }

  ssize_t read(char* ptr, size_t size) override {
    if (read_bytes_ >= max_read_bytes_ || !wait(POLLIN, true)) return -1;
    const ssize_t n = ::recv(fd_, ptr, std::min(size, max_read_bytes_ - read_bytes_), MSG_DONTWAIT);
    if (n > 0) read_bytes_ += static_cast<std::size_t>(n);
    return n;
  }

  // An answer being written is not cut by stop(): the scrape in flight gets it, within the deadline.
  ssize_t write(const char* ptr, size_t size) override {
    if (!wait(POLLOUT, false)) return -1;
    return ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return;
    ip = address_text(address);
    port = address_port(address);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return;
    ip = address_text(address);
    port = address_port(address);
  }
  int socket() const override { return fd_; }

 private:
  // True when the socket is ready for `events` before the deadline (and, for a read, before a stop).
  bool wait(short events, bool stop_ends_it) const {
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - SteadyClock::now());
      if (left.count() <= 0) return false;
      pollfd fds[2] = {{fd_, events, 0}, {stop_fd_, POLLIN, 0}};
      const int ready = ::poll(fds, stop_ends_it ? 2 : 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return false;
      if (stop_ends_it && fds[1].revents != 0) return false;
      return fds[0].revents != 0;
    }
  }

  int fd_;
  SteadyClock::time_point deadline_;
  std::size_t max_read_bytes_;
  int stop_fd_;
  std::size_t read_bytes_ = 0;
};

}  // namespace

// httplib's Server, each connection handled by handle() instead of httplib's keep-alive loop.
class MetricsServer::GuardedServer final : public httplib::Server {
 public:
  explicit GuardedServer(ServerLimits limits) : limits_(limits) {
    if (::pipe2(stop_pipe_, O_CLOEXEC | O_NONBLOCK) != 0)
      throw environment_error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  ~GuardedServer() override {
    ::close(stop_pipe_[0]);
    ::close(stop_pipe_[1]);
  }
  GuardedServer(const GuardedServer&) = delete;
  GuardedServer& operator=(const GuardedServer&) = delete;

  // Ends every read in progress or to come: a request not yet read whole gets no answer.
  void stop_reading() {
    stopping_ = true;
    const char byte = 1;
    while (::write(stop_pipe_[1], &byte, 1) < 0 && errno == EINTR) {
    }
  }

 private:
  // httplib's accept loop hands each accepted socket to a worker through this (a virtual of httplib).
  bool process_and_close_socket(int fd) override {
    const auto deadline = SteadyClock::now() + limits_.request_deadline;
    const std::string peer = peer_key(fd);
    if (!stopping_ && enter(peer)) {
      struct Leave {
        GuardedServer* server;
        const std::string& peer;
        ~Leave() { server->leave(peer); }
      } leave_when_done{this, peer};
      DeadlineStream stream(fd, deadline, limits_.max_request_bytes, stop_pipe_[0]);
      bool connection_closed = false;
      // One request, then Connection: close: no idle keep-alive connection holds a worker.
      process_request(stream, /*close_connection=*/true, connection_closed, nullptr);
    }
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    return true;
  }

  bool enter(const std::string& peer) {
    std::lock_guard lock(mutex_);
    std::size_t& count = in_progress_[peer];
    if (count >= limits_.max_connections_per_peer) return false;
    ++count;
    return true;
  }
  void leave(const std::string& peer) {
    std::lock_guard lock(mutex_);
    if (--in_progress_[peer] == 0) in_progress_.erase(peer);
  }

  ServerLimits limits_;
  int stop_pipe_[2] = {-1, -1};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::map<std::string, std::size_t> in_progress_;
};

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

MetricsServer::MetricsServer(const ListenAddress& address, Endpoints endpoints, ServerLimits limits)
    : server_(std::make_unique<GuardedServer>(limits)), endpoints_(std::move(endpoints)) {
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
  server_->new_task_queue = [workers = limits.workers] { return new httplib::ThreadPool(workers); };
  // Before routing, that is before httplib would read a body: only GET and HEAD are served, a request
  // that announces a body is refused unread, and several byte ranges (each a copy of the answer, a
  // request of a few kB asking for megabytes) are refused with an empty answer.
  server_->set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response) {
    if (request.method != "GET" && request.method != "HEAD") {
      response.status = 405;
      response.set_header("Allow", "GET, HEAD");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (request.has_header("Transfer-Encoding") ||
        (request.has_header("Content-Length") && request.get_header_value("Content-Length") != "0")) {
      response.status = 400;
      return httplib::Server::HandlerResponse::Handled;
    }
    if (request.ranges.size() > 1) {
      response.status = 416;
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
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
  // Reads end at once; then httplib closes the listening socket and shuts the worker pool down, which
  // finishes the responses being written and closes the connections still queued.
  server_->stop_reading();
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace wattwise::exporter
