#include "window/window_server.hpp"

#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "core/private_dir.hpp"
#include "measure/job_watchers.hpp"
#include "window/window_energy.hpp"

namespace wattwise::window {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How often `stop` is looked at while no window waits for its readings.
constexpr auto kIdlePoll = std::chrono::milliseconds(100);

std::string system_message(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

void close_quietly(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

int poll_timeout_ms(Nanos period) {
  return static_cast<int>(
      std::max<long long>(1, std::chrono::ceil<std::chrono::milliseconds>(period).count()));
}

}  // namespace

struct WindowServer::Client {
  int fd = -1;
  std::string received;
  SteadyClock::time_point connected_at;
  std::optional<WindowRequest> request;
  SteadyClock::time_point asked_at;
};

WindowServer::WindowServer(WindowServerLimits limits) : limits_(limits) {
  // As the marker directory (workload/marker_receiver.cpp); mode 0700: only this user may reach the socket.
  directory_ = make_private_directory(socket_directory_base(), "wattwise-window", "the readings directory");
  socket_path_ = directory_ / "window.sock";
  try {
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0) throw environment_error(system_message("cannot create the readings socket"));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket_path_.c_str(), sizeof(address.sun_path) - 1);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0)
      throw environment_error(system_message("cannot bind the readings socket " + socket_path_.string()));
    if (::chmod(socket_path_.c_str(), 0600) != 0 || ::listen(listen_fd_, SOMAXCONN) != 0)
      throw environment_error(system_message("cannot open the readings socket " + socket_path_.string()));
  } catch (...) {
    close_quietly(listen_fd_);
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
    throw;
  }
}

WindowServer::~WindowServer() {
  close_quietly(listen_fd_);
  std::error_code ignored;  // a destructor must not throw; a leftover empty directory in /tmp is harmless
  std::filesystem::remove_all(directory_, ignored);
}

WindowServerCounts WindowServer::counts() const {
  return {answered_.load(), unavailable_.load(), bad_.load(), dropped_.load(), refused_.load()};
}

void WindowServer::accept_clients(std::vector<Client>& clients) {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: none left; anything else: the next poll tries again
    ucred peer{};
    socklen_t length = sizeof(peer);
    // The directory's mode keeps others out already; root could still connect, and is not this job.
    const bool same_user =
        ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0 && peer.uid == ::geteuid();
    if (!same_user || clients.size() >= limits_.max_clients) {
      if (same_user) {
        const std::string reply =
            format_window_reply(WindowAnswer::unavailable("wattwise is answering too many requests"));
        ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      ::close(fd);
      ++refused_;
      continue;
    }
    Client client;
    client.fd = fd;
    client.connected_at = SteadyClock::now();
    clients.push_back(std::move(client));
  }
}

void WindowServer::read_request(Client& client) {
  char buffer[kMaxRequestBytes + 1];
  const std::size_t room = kMaxRequestBytes + 1 - client.received.size();
  const ssize_t got = ::recv(client.fd, buffer, room, MSG_DONTWAIT);
  if (got < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    ++dropped_;
    close_quietly(client.fd);
    return;
  }
  client.received.append(buffer, static_cast<std::size_t>(got));
  const auto newline = client.received.find('\n');
  if (newline == std::string::npos && got > 0 && client.received.size() <= kMaxRequestBytes) return;
  if (newline == std::string::npos && client.received.size() > kMaxRequestBytes) {
    finish(client, WindowAnswer::bad("a request is one line of at most 256 bytes"));
    return;
  }
  if (newline == std::string::npos && client.received.empty()) {  // closed without asking
    ++dropped_;
    close_quietly(client.fd);
    return;
  }
  // A line, or the client's end of the connection after an unterminated one.
  std::string why;
  client.request = parse_window_request(
      std::string_view(client.received).substr(0, std::min(newline, client.received.size())), &why);
  if (!client.request) {
    finish(client, WindowAnswer::bad(why));
    return;
  }
  client.asked_at = SteadyClock::now();
}

void WindowServer::finish(Client& client, const WindowAnswer& answer) {
  const std::string reply = format_window_reply(answer);
  // A reply of a few dozen bytes fits a fresh connection's buffer; a client that went away loses it, which
  // is its own affair (MSG_NOSIGNAL: no SIGPIPE for wattwise).
  ::send(client.fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  switch (answer.status) {
    case WindowAnswer::Status::kOk:
      ++answered_;
      break;
    case WindowAnswer::Status::kUnavailable:
      ++unavailable_;
      break;
    case WindowAnswer::Status::kBad:
      ++bad_;
      break;
  }
  close_quietly(client.fd);
}

void WindowServer::serve(const Resolver& resolve, const std::atomic<bool>& stop) {
  std::vector<Client> clients;
  std::vector<pollfd> fds;
  while (!stop.load()) {
    fds.assign(1, pollfd{listen_fd_, POLLIN, 0});
    bool waiting = false;
    for (const auto& client : clients) {
      if (client.request) waiting = true;
      fds.push_back({client.request ? -1 : client.fd, POLLIN, 0});  // a negative fd is skipped by poll
    }
    const int timeout_ms = poll_timeout_ms(waiting ? limits_.retry_period : Nanos{kIdlePoll});
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
      ::poll(nullptr, 0, timeout_ms);  // cannot happen with valid descriptors; do not spin
    }
    for (std::size_t i = 0; i < clients.size(); ++i)
      if (fds[i + 1].revents != 0) read_request(clients[i]);
    const auto now = SteadyClock::now();
    for (auto& client : clients) {
      if (client.fd < 0) continue;
      if (client.request) {
        std::optional<WindowAnswer> answer;
        try {
          answer = resolve(*client.request);
        } catch (const std::exception& e) {  // one request's failure is that request's answer
          answer = WindowAnswer::unavailable(e.what());
        }
        if (!answer && now - client.asked_at >= limits_.answer_wait)
          answer = WindowAnswer::unavailable("the readings did not cover the window in time");
        if (answer) finish(client, *answer);
      } else if (now - client.connected_at >= limits_.request_timeout) {
        ++dropped_;
        close_quietly(client.fd);
      }
    }
    std::erase_if(clients, [](const Client& client) { return client.fd < 0; });
    if (fds[0].revents != 0) accept_clients(clients);
  }
  for (auto& client : clients) {
    if (client.request) {
      finish(client, WindowAnswer::unavailable("the job ended before its readings covered the window"));
    } else {
      ++dropped_;
      close_quietly(client.fd);
    }
  }
}

measure::JobWatcher window_server_watcher(WindowServer& server) {
  return measure::named_watcher(
      "the server of the job's windows",
      [&server](const measure::LiveJob& job, const std::atomic<bool>& job_ended) {
        const LiveWindows live(job.sampler, job.job_gpus, job.job_start);
        server.serve([&live](const WindowRequest& request) { return live.answer(request); }, job_ended);
      });
}

}  // namespace wattwise::window
