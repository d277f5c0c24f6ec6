// HAZARD ZONE (the settings daemon). A mistake here leaves a user's GPU capped after the client ends, or lets
// a user change a GPU the policy refuses. Before a change here lands, run test_daemon, test_daemon_unit and
// `ctest -L faults` (Release build; docs/architecture.md "Hazard zones").

#include "daemon/server.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "safety/journal.hpp"
#include "safety/restore.hpp"
#include "safety/settings_guard.hpp"
#include "safety/state_dir.hpp"

namespace wattwise::daemon {
namespace {

std::string system_message(const std::string& what) {
  return fmt::format("{}: {}", what, std::strerror(errno));
}

void close_quietly(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string format_limit(const std::optional<hw::PowerLimits>& limits) {
  return limits ? fmt::format("{} W", limits->current_w) : std::string("unknown");
}

}  // namespace

struct Daemon::Client {
  int fd = -1;
  Peer peer;
  std::string received;
  // One guard per GPU this client changed: each its own lock, journal and watchdog.
  std::map<unsigned, std::unique_ptr<safety::GuardedGpus>> held;
};

Daemon::Daemon(hw::ControllableGpuSystem& system, DaemonOptions options)
    : system_(system), options_(std::move(options)) {
  if (!options_.log) options_.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  safety::ensure_state_dir(options_.state_dir);
  const auto lock_path = options_.state_dir / "daemon.lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) throw environment_error(system_message("cannot open the daemon's lock " + lock_path.string()));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    const ssize_t got = ::pread(lock_fd_, pid, sizeof(pid) - 1, 0);
    close_quietly(lock_fd_);
    throw environment_error(fmt::format("another wattwise daemon (pid {}) serves the state directory {}: stop it "
                                        "first (systemctl stop wattwise-daemon)",
                                        got > 0 ? std::string(pid, static_cast<std::size_t>(got)) : "?",
                                        options_.state_dir.string()));
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is only for the message above; the lock itself is held.
  }

  // Before anyone is served: whatever a killed daemon (or a killed sweep) left changed is put back.
  for (const auto& temporary : safety::remove_stale_journal_temporaries(options_.state_dir))
    log(fmt::format("removed {}, left by a process killed while it rewrote its journal", temporary.string()));
  for (const auto& journal : safety::stale_journals(options_.state_dir)) {
    try {
      const auto report = safety::restore_from_journal_file(system_, journal);
      log(fmt::format("restored from the journal {} before serving:\n{}", journal.string(), report.summary()));
      for (const auto& uuid : report.failed_uuids()) unrestored_uuids_.insert(uuid);
    } catch (const Error& e) {
      log(fmt::format("journal {} not applied: {}", journal.string(), e.what()));
      try {
        for (const auto& entry : safety::read_journal(journal).gpus) unrestored_uuids_.insert(entry.uuid);
      } catch (const Error&) {
      }
    }
  }

  policy_ = read_policy(options_.policy_path);

  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw environment_error(system_message("cannot create the daemon's socket"));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (options_.socket_path.string().size() >= sizeof(address.sun_path))
    throw usage_error(fmt::format("the socket path {} is too long for a Unix socket: choose a shorter one",
                                  options_.socket_path.string()));
  std::strncpy(address.sun_path, options_.socket_path.c_str(), sizeof(address.sun_path) - 1);
  // A socket left by a daemon that was killed: ours (the daemon lock is held), so it goes. Anything else
  // at that path is not removed.
  struct stat info {};
  if (::lstat(options_.socket_path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode))
    ::unlink(options_.socket_path.c_str());
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    const std::string message = system_message("cannot bind the daemon's socket " + options_.socket_path.string());
    close_quietly(listen_fd_);
    throw environment_error(message + " (its directory must exist: systemd's RuntimeDirectory=wattwise makes it)");
  }
  // Anyone may connect: the policy decides what each user may do.
  if (::chmod(options_.socket_path.c_str(), 0666) != 0 || ::listen(listen_fd_, SOMAXCONN) != 0) {
    const std::string message = system_message("cannot open the daemon's socket " + options_.socket_path.string());
    close_quietly(listen_fd_);
    throw environment_error(message);
  }
  log(fmt::format("serving {} GPUs on {} under the policy {} ({} rules{})", system_.count(),
                  options_.socket_path.string(), policy_.source, policy_.rules.size(),
                  policy_.job_owner ? ", job owners from " + policy_.job_owner->dir.string() : ""));
}

Daemon::~Daemon() {
  for (auto& client : clients_) drop(*client, "the daemon stops");
  clients_.clear();
  if (listen_fd_ >= 0) {
    ::unlink(options_.socket_path.c_str());
    close_quietly(listen_fd_);
  }
  close_quietly(lock_fd_);
}

void Daemon::log(const std::string& line) const {
  options_.log(line);
}

void Daemon::reload_policy() {
  try {
    policy_ = read_policy(options_.policy_path);
    log(fmt::format("SIGHUP: policy {} read again ({} rules{})", policy_.source, policy_.rules.size(),
                    policy_.job_owner ? ", job owners from " + policy_.job_owner->dir.string() : ""));
  } catch (const Error& e) {
    log(fmt::format("SIGHUP: the new policy is refused whole and the previous one kept: {}", e.what()));
  }
}

void Daemon::serve() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGHUP);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  if (::pthread_sigmask(SIG_BLOCK, &signals, nullptr) != 0)
    throw environment_error("cannot block the daemon's signals");
  const int signal_fd = ::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0) throw environment_error(system_message("cannot open a signalfd"));
  bool stop = false;
  std::vector<pollfd> fds;
  while (!stop) {
    fds.clear();
    fds.push_back({signal_fd, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& client : clients_) fds.push_back({client->fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      ::poll(nullptr, 0, 100);  // cannot happen with valid descriptors; do not spin
      continue;
    }
    // Clients first: a closed connection's GPUs go back before anything else is done.
    const std::size_t polled = clients_.size();
    for (std::size_t i = 0; i < polled; ++i)
      if (fds[i + 2].revents != 0) read_from(*clients_[i]);
    std::erase_if(clients_, [](const std::unique_ptr<Client>& client) { return client->fd < 0; });
    if (fds[0].revents != 0) {
      signalfd_siginfo info{};
      while (::read(signal_fd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        if (info.ssi_signo == SIGHUP) {
          reload_policy();
        } else {
          log(fmt::format("SIG{}: putting every GPU back and stopping", sigabbrev_np(static_cast<int>(info.ssi_signo))));
          stop = true;
        }
      }
    }
    if (!stop && fds[1].revents != 0) accept_clients();
  }
  for (auto& client : clients_) drop(*client, "the daemon stops");
  clients_.clear();
  ::close(signal_fd);
}

void Daemon::accept_clients() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    ucred credentials{};
    socklen_t length = sizeof(credentials);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
      ::close(fd);
      continue;
    }
    std::size_t of_user = 0;
    for (const auto& client : clients_) of_user += client->peer.uid == credentials.uid ? 1 : 0;
    std::string full;
    if (clients_.size() >= options_.max_clients)
      full = fmt::format("the daemon serves {} connections already: try again later", options_.max_clients);
    else if (of_user >= options_.max_clients_per_user)
      full = fmt::format("uid {} has {} connections to the daemon already: end one first", credentials.uid,
                         options_.max_clients_per_user);
    if (!full.empty()) {
      const std::string reply = format_reply({Reply::Status::kRefused, full});
      ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      ::close(fd);
      continue;
    }
    auto client = std::make_unique<Client>();
    client->fd = fd;
    client->peer = describe_peer(credentials.uid, credentials.gid, credentials.pid);
    clients_.push_back(std::move(client));
  }
}

void Daemon::read_from(Client& client) {
  char buffer[kMaxLineBytes + 1];
  const ssize_t got = ::recv(client.fd, buffer, sizeof(buffer), MSG_DONTWAIT);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (got <= 0) {
    drop(client, got == 0 ? "its connection closed" : "its connection failed");
    return;
  }
  client.received.append(buffer, static_cast<std::size_t>(got));
  for (;;) {
    const auto newline = client.received.find('\n');
    if (newline == std::string::npos) break;
    std::string why;
    const auto request = parse_request(std::string_view(client.received).substr(0, newline), &why);
    client.received.erase(0, newline + 1);
    send_reply(client, request ? answer(client, *request) : Reply{Reply::Status::kBad, why});
    if (client.fd < 0) return;
  }
  if (client.received.size() > kMaxLineBytes) {
    send_reply(client, {Reply::Status::kBad, fmt::format("a request is one line of at most {} bytes", kMaxLineBytes)});
    drop(client, "it sent a line longer than a request");
  }
}

void Daemon::send_reply(Client& client, const Reply& reply) {
  if (client.fd < 0) return;
  const std::string line = format_reply(reply);
  // A reply is small; a client that does not read its replies until the socket's buffer is full is dropped.
  if (::send(client.fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(line.size()))
    drop(client, "it does not read its replies");
}

Reply Daemon::answer(Client& client, const Request& request) {
  switch (request.kind) {
    case Request::Kind::kAllowed:
      return {Reply::Status::kOk, describe_allowed(policy_, client.peer)};
    case Request::Kind::kRelease:
      return release(client, request.gpu);
    case Request::Kind::kReleaseAll: {
      std::vector<unsigned> gpus;
      for (const auto& [gpu, guard] : client.held) gpus.push_back(gpu);
      std::vector<std::string> failures;
      for (unsigned gpu : gpus) {
        const Reply reply = release(client, gpu);
        if (reply.status != Reply::Status::kOk) failures.push_back(reply.text);
      }
      if (!failures.empty()) return {Reply::Status::kFailed, fmt::format("{}", fmt::join(failures, "; "))};
      return {Reply::Status::kOk, fmt::format("{} GPUs put back", gpus.size())};
    }
    case Request::Kind::kSet:
      return set(client, request);
    case Request::Kind::kCheck:
      return check(client, request);
  }
  return {Reply::Status::kBad, "unknown request"};
}

namespace {

plan::HardwareSettings settings_of(const Request& request) {
  plan::HardwareSettings settings;
  switch (request.knob) {
    case Knob::kPowerLimitW:
      settings.power_limit_w = request.value;
      break;
    case Knob::kSmClockMhz:
      settings.sm_clock_mhz = static_cast<unsigned>(request.value);
      break;
    case Knob::kMemClockMhz:
      settings.mem_clock_mhz = static_cast<unsigned>(request.value);
      break;
  }
  return settings;
}

}  // namespace

std::optional<Reply> Daemon::refusal(const Client& client, const Request& request) {
  const Peer& peer = client.peer;
  if (request.gpu >= system_.count()) {
    return Reply{Reply::Status::kRefused,
            fmt::format("there is no GPU {} on this node (it has {}: 0-{})", request.gpu, system_.count(),
                        system_.count() == 0 ? 0 : system_.count() - 1)};
  }
  if (auto why = policy_refusal(policy_, peer, request.gpu, request.knob, request.value))
    return Reply{Reply::Status::kRefused, *why};
  if (auto owner = owners_.find(request.gpu); owner != owners_.end() && owner->second != &client) {
    const Peer& holder = owner->second->peer;
    return Reply{Reply::Status::kRefused,
            fmt::format("GPU {} is held by {} (uid {}, pid {}) through the daemon: one client per GPU; its "
                        "settings go back when that client ends",
                        request.gpu, holder.user, holder.uid, holder.pid)};
  }
  if (auto why = job_owner_refusal(policy_, peer, request.gpu)) return Reply{Reply::Status::kRefused, *why};
  hw::Gpu& gpu = system_.gpu(request.gpu);
  const std::string uuid = gpu.identity().uuid;
  if (unrestored_uuids_.contains(uuid)) {
    return Reply{Reply::Status::kFailed,
            fmt::format("GPU {} ({}) still has settings from a journal that could not be restored: the "
                        "administrator runs `wattwise restore`, then restarts the daemon",
                        request.gpu, uuid)};
  }
  try {
    safety::validate_hardware_settings(system_, {request.gpu}, {settings_of(request)});
  } catch (const Error& e) {
    return Reply{e.kind() == ErrorKind::kUsage ? Reply::Status::kRefused : Reply::Status::kFailed, e.what()};
  }
  return std::nullopt;
}

Reply Daemon::check(const Client& client, const Request& request) {
  if (auto refused = refusal(client, request)) return *refused;
  return {Reply::Status::kOk, fmt::format("GPU {} {} {} {} is allowed now; nothing was changed", request.gpu,
                                          to_string(request.knob), request.value, unit_of(request.knob))};
}

Reply Daemon::set(Client& client, const Request& request) {
  if (auto refused = refusal(client, request)) return *refused;
  const Peer& peer = client.peer;
  const plan::HardwareSettings settings = settings_of(request);
  hw::Gpu& gpu = system_.gpu(request.gpu);
  const std::string uuid = gpu.identity().uuid;
  std::optional<hw::PowerLimits> before;
  try {
    if (request.knob == Knob::kPowerLimitW) before = gpu.power_limits();
  } catch (const Error&) {
  }
  auto held = client.held.find(request.gpu);
  try {
    if (held == client.held.end()) {
      const auto journal =
          safety::journal_path_for(options_.state_dir, static_cast<long>(::getpid()), next_journal_part_++);
      auto guard = std::make_unique<safety::GuardedGpus>(system_, std::vector<std::size_t>{request.gpu},
                                                         options_.state_dir, options_.watchdog, journal);
      held = client.held.emplace(request.gpu, std::move(guard)).first;
      owners_[request.gpu] = &client;
    }
    held->second->apply(settings);
  } catch (const Error& e) {
    log(fmt::format("refused uid={} ({}) pid={} gpu={} ({}) {} {} {}: {}", peer.uid, peer.user, peer.pid,
                    request.gpu, uuid, to_string(request.knob), request.value, unit_of(request.knob), e.what()));
    return {Reply::Status::kFailed, e.what()};
  }
  const std::string old_value = request.knob == Knob::kPowerLimitW
                                    ? format_limit(before)
                                    : std::string("as found (NVML cannot read a clock lock)");
  log(fmt::format("set uid={} ({}) pid={} gpu={} ({}) {}: {} -> {} {}", peer.uid, peer.user, peer.pid,
                  request.gpu, uuid, to_string(request.knob), old_value, request.value, unit_of(request.knob)));
  return {Reply::Status::kOk,
          fmt::format("GPU {} {} {} {}; put back when this connection closes", request.gpu, to_string(request.knob),
                      request.value, unit_of(request.knob))};
}

Reply Daemon::release(Client& client, unsigned gpu) {
  const auto held = client.held.find(gpu);
  if (held == client.held.end()) return {Reply::Status::kOk, fmt::format("GPU {} was not changed by you", gpu)};
  std::unique_ptr<safety::GuardedGpus> guard = std::move(held->second);
  client.held.erase(held);
  owners_.erase(gpu);
  const safety::RestoreReport report = guard->restore();
  guard.reset();  // the lock goes with it
  const Peer& peer = client.peer;
  std::string summary = report.summary();
  while (!summary.empty() && summary.back() == '\n') summary.pop_back();
  for (auto& c : summary) c = c == '\n' ? ';' : c;
  log(fmt::format("restored uid={} ({}) pid={} gpu={}: {}", peer.uid, peer.user, peer.pid, gpu, summary));
  if (!report.all_ok()) return {Reply::Status::kFailed, summary};
  return {Reply::Status::kOk, fmt::format("GPU {} put back", gpu)};
}

void Daemon::drop(Client& client, const std::string& why) {
  if (client.fd < 0) return;
  close_quietly(client.fd);
  if (client.held.empty()) return;
  std::vector<unsigned> gpus;
  for (const auto& [gpu, guard] : client.held) gpus.push_back(gpu);
  log(fmt::format("client uid={} ({}) pid={} ends ({}): putting back GPU {}", client.peer.uid, client.peer.user,
                  client.peer.pid, why, fmt::join(gpus, ",")));
  for (unsigned gpu : gpus) release(client, gpu);
}

}  // namespace wattwise::daemon
