#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/client.hpp"
#include "daemon/policy.hpp"
#include "daemon/protocol.hpp"
#include "hw/gpu.hpp"
#include "safety/guarded_gpus.hpp"
#include "safety/watchdog.hpp"

namespace wattwise::daemon {

inline constexpr const char* kDefaultPolicyPath = "/etc/wattwise/policy.json";

struct DaemonOptions {
  std::filesystem::path socket_path = default_socket_path();
  std::filesystem::path policy_path = kDefaultPolicyPath;
  std::filesystem::path state_dir;      // journals and GPU locks (safety::state_dir())
  safety::WatchdogLaunch watchdog;      // one per held GPU: restores it if the daemon itself is killed
  std::size_t max_clients = 64;         // connections at once
  std::size_t max_clients_per_user = 8;
  // Where the log lines go (stderr, so journald, by default): every change with uid, pid, GPU, old, new.
  std::function<void(const std::string&)> log;
};

// `wattwise daemon`: the one process on the node that changes GPU settings for users who are not root,
// within a policy (policy.hpp), over a Unix socket (protocol.hpp). Each GPU a client changes is held through
// safety::GuardedGpus (its lock, its journal, a watchdog), so:
//   - the client's connection closing (exit, crash, kill -9) puts the GPU back at once;
//   - one client per GPU: another is refused with the holder's user and pid;
//   - a daemon killed with SIGKILL has its watchdogs restore, and a restarted daemon restores every stale
//     journal of the state directory before it listens.
// Single-threaded (a watchdog is forked per GPU, which wants no threads): one poll loop.
class Daemon {
 public:
  // Takes the daemon lock (a second daemon on the same state directory is refused), restores the stale
  // journals, reads the policy (data_error when it is invalid: nothing is served), and listens.
  Daemon(hw::ControllableGpuSystem& system, DaemonOptions options);
  ~Daemon();  // puts back every GPU still held, removes the socket
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Serves until SIGTERM or SIGINT (then every GPU is put back); SIGHUP re-reads the policy (an invalid one
  // is refused whole and the previous one kept). Blocks those three signals in this thread.
  void serve();

  const Policy& policy() const { return policy_; }

 private:
  struct Client;
  void log(const std::string& line) const;
  void reload_policy();
  void accept_clients();
  void read_from(Client& client);
  Reply answer(Client& client, const Request& request);
  // The one decision of whether `client` may set request.knob to request.value on request.gpu now: the
  // GPU exists, the policy grants it, no other client holds the GPU, the job-owner rule, no unrestored
  // journal, the GPU's own range. nullopt when allowed; else the reply to give. Changes and logs nothing:
  // `set` acts on it, `check` only answers it.
  std::optional<Reply> refusal(const Client& client, const Request& request);
  Reply set(Client& client, const Request& request);
  Reply check(const Client& client, const Request& request);
  Reply release(Client& client, unsigned gpu);
  void drop(Client& client, const std::string& why);
  void send_reply(Client& client, const Reply& reply);

  hw::ControllableGpuSystem& system_;
  DaemonOptions options_;
  Policy policy_;
  int lock_fd_ = -1;
  int listen_fd_ = -1;
  std::vector<std::unique_ptr<Client>> clients_;
  std::map<unsigned, Client*> owners_;          // GPU index -> the client that holds it
  std::set<std::string> unrestored_uuids_;      // left changed by a journal that could not be restored
  unsigned long next_journal_part_ = 0;
};

}  // namespace wattwise::daemon
