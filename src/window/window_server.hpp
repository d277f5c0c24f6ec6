#pragma once

// The wattwise end of the in-process readings (docs/windows.md): a Unix stream socket, mode 0600 in a fresh
// directory of mode 0700, that a job run by `measure` or `tune` finds in WATTWISE_WINDOW_SOCKET. A client
// connects, writes one request line and reads one reply line (window_protocol.hpp).
//
// Why a stream socket beside the marker datagrams rather than a query datagram on the marker socket: a reply
// needs an address to go back to, and a datagram client would have to bind one (a path somewhere, or the
// abstract namespace that every process of the machine can reach); a connection is that address, private to
// the two ends. Why its own directory: the marker directory lets other users pass (a job that changed user
// must still mark its phases, docs/markers.md), while readings are for this user's processes only.
//
// One thread serves every client with poll() on non-blocking sockets, so a client that connects and says
// nothing, trickles bytes, sends garbage or never reads its reply costs at most its own descriptor until its
// deadline: it cannot stall the other clients, and nothing here ever runs on the sampler's or the marker
// receiver's threads. Counts of what was refused are kept for the tests and the report.

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "core/clock.hpp"
#include "measure/session.hpp"
#include "window/window_protocol.hpp"

namespace wattwise::window {

struct WindowServerLimits {
  // A client must send its whole request line this soon after connecting.
  Nanos request_timeout = std::chrono::seconds(1);
  // How long a window whose readings are not in yet waits for them (the samples are drained every 0.5 s,
  // at most every 1 s): past it the reply says the readings do not cover the window.
  Nanos answer_wait = std::chrono::seconds(3);
  // Connections served at once; more are told to retry and closed at once (no descriptor is held for them).
  std::size_t max_clients = 32;
  // How often waiting windows are tried again.
  Nanos retry_period = std::chrono::milliseconds(20);
};

struct WindowServerCounts {
  std::size_t answered = 0;     // replies with energy
  std::size_t unavailable = 0;  // replies saying why there is none (not covered in time, a failed GPU, ...)
  std::size_t bad = 0;          // malformed or oversized requests
  std::size_t dropped = 0;      // connections closed without a request (silent past the deadline, or gone)
  std::size_t refused = 0;      // another user's process, or one connection too many
};

class WindowServer {
 public:
  static constexpr const char* kEnvironmentVariable = "WATTWISE_WINDOW_SOCKET";

  // Creates the directory and the listening socket; environment_error when it cannot.
  explicit WindowServer(WindowServerLimits limits = {});
  ~WindowServer();
  WindowServer(const WindowServer&) = delete;
  WindowServer& operator=(const WindowServer&) = delete;

  const std::filesystem::path& socket_path() const { return socket_path_; }

  // The answer to a request; nullopt while the readings do not cover the window yet (asked again later).
  using Resolver = std::function<std::optional<WindowAnswer>(const WindowRequest&)>;
  // Serves on the calling thread until `stop` turns true (returns within ~100 ms of it); connections made
  // before are queued by the kernel. Never throws: a failing call ends that one connection.
  void serve(const Resolver& resolve, const std::atomic<bool>& stop);

  WindowServerCounts counts() const;

 private:
  struct Client;
  void accept_clients(std::vector<Client>& clients);
  void read_request(Client& client);
  void finish(Client& client, const WindowAnswer& answer);

  WindowServerLimits limits_;
  std::filesystem::path directory_;
  std::filesystem::path socket_path_;
  int listen_fd_ = -1;
  std::atomic<std::size_t> answered_{0}, unavailable_{0}, bad_{0}, dropped_{0}, refused_{0};
};

// A JobWatcher (measure/session.hpp) that serves `server` with the job's live readings (LiveWindows) until
// the job ends. The server must outlive the measurement.
measure::JobWatcher window_server_watcher(WindowServer& server);

}  // namespace wattwise::window
