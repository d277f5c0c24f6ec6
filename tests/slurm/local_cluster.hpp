#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "subprocess.hpp"

// A SLURM cluster on localhost for tests, from Debian's packages: munged with its own key and socket,
// slurmctld, and one slurmd per node (NodeName=n1..nN, all on 127.0.0.1 with their own ports: Debian builds
// slurmd with multiple-slurmd support), each node with `gpus_per_node` GRES GPUs so that srun sets
// CUDA_VISIBLE_DEVICES as a GPU cluster does. Everything (config, state, spool, logs, sockets) lives in the
// test's directory; the ports are free loopback ports chosen at start.
//
// Every daemon runs in the foreground as a child of the test, killed by the kernel if the test process dies
// (PR_SET_PDEATHSIG), and stopped by the destructor (SIGTERM, then SIGKILL): none outlives the test.
namespace wattwise::e2e {

class LocalCluster {
 public:
  // Why this machine cannot run one (a missing program, not root), or nullopt.
  static std::optional<std::string> unavailable_reason();

  // Starts munged, slurmctld and the slurmds, and waits until every node is idle. Throws std::runtime_error
  // with the daemons' last log lines when one does not come up.
  // `extra_conf`: lines added to slurm.conf (e.g. Prolog=, Epilog=).
  LocalCluster(const std::filesystem::path& dir, int nodes, int gpus_per_node,
               const std::string& extra_conf = "");
  ~LocalCluster();
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  // What srun and the other clients need in their environment (SLURM_CONF), added to `env`.
  Environment client_environment(Environment env) const;
  // The full path of a SLURM client (srun, sinfo, ...).
  static std::string program(const std::string& name);
  // The last lines of every daemon's log, for failure messages.
  std::string log_tails() const;

 private:
  void start_daemon(const std::string& name, const std::vector<std::string>& argv);
  void wait_until_idle(int nodes);
  void stop_all();

  std::filesystem::path dir_;
  std::filesystem::path conf_;
  struct Daemon {
    std::string name;
    int pid = 0;
  };
  std::vector<Daemon> daemons_;
};

}  // namespace wattwise::e2e
