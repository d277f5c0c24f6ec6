#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "daemon/protocol.hpp"
#include "hw/gpu.hpp"
#include "safety/settings_access.hpp"

namespace wattwise::daemon {

// Where clients look for the daemon: $WATTWISE_DAEMON_SOCKET, else /run/wattwise/daemon.sock.
std::filesystem::path default_socket_path();

// A connection to the settings daemon. The settings it makes last as long as this object: when it is
// destroyed, or this process ends in any way, the daemon puts its GPUs back.
class DaemonClient {
 public:
  // environment_error naming the socket when the daemon cannot be reached.
  explicit DaemonClient(const std::filesystem::path& socket_path,
                        std::chrono::milliseconds reply_timeout = std::chrono::seconds(60));
  ~DaemonClient();
  DaemonClient(const DaemonClient&) = delete;
  DaemonClient& operator=(const DaemonClient&) = delete;

  // Sends the request and waits for its reply. environment_error when the daemon went away, answered
  // nothing in time, or answered what is not a reply.
  Reply ask(const Request& request);
  // ask(), then an Error when the reply is not ok: refused and bad as usage errors (the policy or the
  // request), failed as an environment error; the message is the daemon's line.
  std::string ask_ok(const Request& request);

 private:
  int fd_ = -1;
  std::chrono::milliseconds reply_timeout_;
  std::string received_;
};

// The settings path of a process that is not root (safety::SettingsAccess): each hold() is one connection
// to the daemon at `socket_path`; apply() asks it to set each knob of each GPU (by its NVML index), restore()
// asks it to put every GPU back, and a process that ends in any way has its connection closed, so the
// daemon puts them back then. The daemon's policy decides what may be set; a refusal is a usage error
// with the daemon's line (docs/operators.md "What each refusal means").
class DaemonSettingsAccess final : public safety::SettingsAccess {
 public:
  // `values_flag` names the flag the values come from in a refusal ("--range"); empty: the knob's own
  // (--power-limit, --sm-clock, --mem-clock).
  explicit DaemonSettingsAccess(std::filesystem::path socket_path, std::string values_flag = {})
      : socket_path_(std::move(socket_path)), values_flag_(std::move(values_flag)) {}
  std::string_view name() const override { return "daemon"; }
  // The ranges of every GPU, then every distinct value of every knob on every GPU asked of the daemon
  // (`wwd1 check`, decided as `set` is; nothing changed or held): the first refused is a usage_error,
  //   the wattwise daemon refused: <its line> (value V of --flag): <what to do>
  // so a sweep stops before its first run, not at the run that reaches the value.
  void validate(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                const std::vector<plan::HardwareSettings>& settings) const override;
  std::unique_ptr<safety::HeldSettings> hold(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                                             const std::vector<plan::HardwareSettings>& settings) const override;
  const std::filesystem::path& socket_path() const { return socket_path_; }

 private:
  std::filesystem::path socket_path_;
  std::string values_flag_;
};

// Whether a daemon socket exists at `socket_path` (a socket file; not whether it answers).
bool daemon_socket_exists(const std::filesystem::path& socket_path);

// `info`'s line on the daemon, for people: "reachable at PATH; the policy lets you: ...", "none at PATH:
// changing settings needs root" or "unreachable at PATH: why". Never throws.
std::string daemon_status_line(const std::filesystem::path& socket_path, bool process_is_root);

}  // namespace wattwise::daemon
