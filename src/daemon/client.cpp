#include "daemon/client.hpp"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "safety/settings_guard.hpp"

namespace wattwise::daemon {

using SteadyClock = std::chrono::steady_clock;

std::filesystem::path default_socket_path() {
  if (const char* path = std::getenv("WATTWISE_DAEMON_SOCKET"); path && *path) return path;
  return "/run/wattwise/daemon.sock";
}

DaemonClient::DaemonClient(const std::filesystem::path& socket_path, std::chrono::milliseconds reply_timeout)
    : reply_timeout_(reply_timeout) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.string().size() >= sizeof(address.sun_path))
    throw usage_error(fmt::format("the daemon's socket path {} is too long", socket_path.string()));
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof(address.sun_path) - 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw environment_error(fmt::format("cannot create a socket: {}", std::strerror(errno)));
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    throw environment_error(fmt::format("cannot reach the wattwise daemon at {}: {} (is it running? "
                                        "systemctl status wattwise-daemon)",
                                        socket_path.string(), std::strerror(error)));
  }
}

DaemonClient::~DaemonClient() {
  if (fd_ >= 0) ::close(fd_);
}

Reply DaemonClient::ask(const Request& request) {
  const std::string line = format_request(request);
  std::size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw environment_error(fmt::format("the wattwise daemon went away: {}", std::strerror(errno)));
    sent += static_cast<std::size_t>(n);
  }
  const auto deadline = SteadyClock::now() + reply_timeout_;
  for (;;) {
    if (const auto newline = received_.find('\n'); newline != std::string::npos) {
      const std::string reply_line = received_.substr(0, newline);
      received_.erase(0, newline + 1);
      auto reply = parse_reply(reply_line);
      if (!reply) throw environment_error("the wattwise daemon answered what is not a reply: update wattwise");
      return *reply;
    }
    if (received_.size() > 64 * 1024)
      throw environment_error("the wattwise daemon answered a line too long to be a reply");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0)
      throw environment_error(fmt::format("the wattwise daemon did not answer within {} s",
                                          reply_timeout_.count() / 1000.0));
    pollfd fd{fd_, POLLIN, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t got = ::recv(fd_, buffer, sizeof(buffer), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw environment_error("the wattwise daemon closed the connection");
    received_.append(buffer, static_cast<std::size_t>(got));
  }
}

std::string DaemonClient::ask_ok(const Request& request) {
  const Reply reply = ask(request);
  switch (reply.status) {
    case Reply::Status::kOk:
      return reply.text;
    case Reply::Status::kRefused:
      throw usage_error("the wattwise daemon refused: " + reply.text);
    case Reply::Status::kBad:
      throw usage_error("the wattwise daemon did not understand the request: " + reply.text);
    case Reply::Status::kFailed:
      throw environment_error("the wattwise daemon failed: " + reply.text);
  }
  return reply.text;
}

namespace {

// One hold(): the connection that keeps the daemon's changes alive, and the GPUs it may change.
class DaemonHeldSettings final : public safety::HeldSettings {
 public:
  struct HeldGpu {
    unsigned index = 0;  // NVML index: the protocol's <gpu>
    std::string uuid;
  };
  DaemonHeldSettings(const std::filesystem::path& socket_path, std::vector<HeldGpu> gpus)
      : client_(socket_path), gpus_(std::move(gpus)) {}

  void apply(const plan::HardwareSettings& settings) override {
    for (const HeldGpu& gpu : gpus_) {
      const auto set = [&](Knob knob, double value) {
        client_.ask_ok(Request{.kind = Request::Kind::kSet, .gpu = gpu.index, .knob = knob, .value = value});
      };
      if (settings.power_limit_w) set(Knob::kPowerLimitW, *settings.power_limit_w);
      if (settings.sm_clock_mhz) set(Knob::kSmClockMhz, *settings.sm_clock_mhz);
      if (settings.mem_clock_mhz) set(Knob::kMemClockMhz, *settings.mem_clock_mhz);
    }
  }

  safety::RestoreReport restore(const std::set<std::string>& unanswering) override {
    safety::RestoreReport report;
    if (restored_) return report;
    restored_ = true;
    for (const HeldGpu& gpu : gpus_) {
      safety::GpuRestoreOutcome outcome{gpu.uuid, gpu.index, false, ""};
      if (unanswering.contains(gpu.uuid)) {
        outcome.message = "its driver stopped answering: the daemon puts it back when this connection closes";
      } else {
        try {
          const Reply reply = client_.ask(Request{.kind = Request::Kind::kRelease, .gpu = gpu.index});
          outcome.ok = reply.status == Reply::Status::kOk;
          outcome.message = outcome.ok ? "put back by the wattwise daemon" : "the wattwise daemon: " + reply.text;
        } catch (const Error& e) {
          outcome.message = fmt::format("{}: the daemon puts it back from its journal when it runs again", e.what());
        }
      }
      report.gpus.push_back(outcome);
    }
    return report;
  }

 private:
  DaemonClient client_;
  std::vector<HeldGpu> gpus_;
  bool restored_ = false;
};

}  // namespace

namespace {

std::string_view flag_of(Knob knob) {
  switch (knob) {
    case Knob::kPowerLimitW:
      return "--power-limit";
    case Knob::kSmClockMhz:
      return "--sm-clock";
    case Knob::kMemClockMhz:
      return "--mem-clock";
  }
  return "?";
}

// Asks the daemon whether each distinct (GPU index, knob, value) of `settings` on `gpus` (NVML indices)
// would be set now: a usage_error for the first refused, an environment_error when the daemon fails or
// does not know the request.
void check_with_daemon(DaemonClient& client, const std::vector<unsigned>& gpus,
                       const std::vector<plan::HardwareSettings>& settings, const std::string& values_flag) {
  std::set<std::tuple<unsigned, Knob, double>> asked;
  const auto check = [&](unsigned gpu, Knob knob, double value) {
    if (!asked.emplace(gpu, knob, value).second) return;
    const Reply reply = client.ask(Request{.kind = Request::Kind::kCheck, .gpu = gpu, .knob = knob, .value = value});
    const std::string flag = values_flag.empty() ? std::string(flag_of(knob)) : values_flag;
    switch (reply.status) {
      case Reply::Status::kOk:
        return;
      case Reply::Status::kRefused:
        throw usage_error(fmt::format(
            "the wattwise daemon refused: {} (value {} of {}): leave that value out or ask the administrator "
            "to allow it (`wattwise info` shows what the policy lets you); nothing ran and no GPU was changed",
            reply.text, value, flag));
      case Reply::Status::kBad:
        throw environment_error(fmt::format(
            "the wattwise daemon does not know the check request ({}): it is older than this wattwise; the "
            "administrator restarts it with this version (systemctl restart wattwise-daemon)",
            reply.text));
      case Reply::Status::kFailed:
        throw environment_error(fmt::format("the wattwise daemon failed to check {} {} on GPU {}: {}", flag, value,
                                            gpu, reply.text));
    }
  };
  // In the plan's order: the first value refused is the one named.
  for (const plan::HardwareSettings& s : settings) {
    for (unsigned gpu : gpus) {
      if (s.power_limit_w) check(gpu, Knob::kPowerLimitW, *s.power_limit_w);
      if (s.sm_clock_mhz) check(gpu, Knob::kSmClockMhz, *s.sm_clock_mhz);
      if (s.mem_clock_mhz) check(gpu, Knob::kMemClockMhz, *s.mem_clock_mhz);
    }
  }
}

}  // namespace

void DaemonSettingsAccess::validate(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                                    const std::vector<plan::HardwareSettings>& settings) const {
  safety::validate_hardware_settings(system, gpu_indices, settings, /*check_permission=*/false);
  if (!plan::changes_hardware(settings)) return;
  std::vector<unsigned> gpus;
  for (std::size_t position : gpu_indices) gpus.push_back(system.gpu(position).identity().index);
  DaemonClient client(socket_path_);  // closed at once: a check holds nothing
  check_with_daemon(client, gpus, settings, values_flag_);
}

std::unique_ptr<safety::HeldSettings> DaemonSettingsAccess::hold(hw::GpuSystem& system,
                                                                 const std::vector<std::size_t>& gpu_indices,
                                                                 const std::vector<plan::HardwareSettings>&) const {
  std::vector<DaemonHeldSettings::HeldGpu> gpus;
  for (std::size_t position : gpu_indices) {
    const hw::GpuIdentity& identity = system.gpu(position).identity();
    gpus.push_back({identity.index, identity.uuid});
  }
  return std::make_unique<DaemonHeldSettings>(socket_path_, std::move(gpus));
}

bool daemon_socket_exists(const std::filesystem::path& socket_path) {
  struct stat info {};
  return ::stat(socket_path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode);
}

std::string daemon_status_line(const std::filesystem::path& socket_path, bool process_is_root) {
  if (!daemon_socket_exists(socket_path)) {
    return fmt::format("none at {}: {}", socket_path.string(),
                       process_is_root ? "not needed, wattwise runs as root"
                                       : "changing settings needs root (docs/operators.md \"The settings daemon\")");
  }
  try {
    DaemonClient client(socket_path, std::chrono::seconds(5));
    const Reply reply = client.ask(Request{.kind = Request::Kind::kAllowed});
    if (reply.status != Reply::Status::kOk)
      return fmt::format("reachable at {}, but it answered: {} {}", socket_path.string(), to_string(reply.status),
                         reply.text);
    return fmt::format("reachable at {}; the policy lets you: {}", socket_path.string(), reply.text);
  } catch (const Error& e) {
    return fmt::format("unreachable at {}: {}", socket_path.string(), e.what());
  }
}

}  // namespace wattwise::daemon
