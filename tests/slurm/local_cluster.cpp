#include "local_cluster.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "../support/loopback_port.hpp"

namespace wattwise::e2e {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// "n1", "n2", ...: built with append, as g++ 12 warns falsely (-Wrestrict) on "n" + std::string.
std::string node_name(int n) {
  std::string name = "n";
  name += std::to_string(n);
  return name;
}

std::string last_lines(const fs::path& file, std::size_t count) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i)
    out += "    " + lines[i] + "\n";
  return out;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// munged refuses a key others can read and a socket directory others cannot enter.
void write_munge_key(const fs::path& key) {
  std::ifstream random("/dev/urandom", std::ios::binary);
  std::string bytes(1024, '\0');
  random.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  write_file(key, bytes);
  fs::permissions(key, fs::perms::owner_read);
}

std::string slurm_conf(const fs::path& dir, int nodes, int gpus_per_node) {
  std::ostringstream c;
  c << "ClusterName=wattwise-test\n"
    << "SlurmctldHost=localhost(127.0.0.1)\n"
    << "SlurmctldPort=" << testing::free_loopback_port() << "\n"
    << "SlurmdPort=" << testing::free_loopback_port() << "\n"
    << "SlurmUser=root\nSlurmdUser=root\n"
    << "AuthType=auth/munge\nCredType=cred/munge\n"
    << "AuthInfo=socket=" << (dir / "munge-socket" / "munge.socket").string() << "\n"
    << "StateSaveLocation=" << (dir / "state").string() << "\n"
    << "SlurmdSpoolDir=" << (dir / "spool").string() << "/%n\n"
    << "SlurmctldPidFile=" << (dir / "slurmctld.pid").string() << "\n"
    << "SlurmdPidFile=" << (dir / "slurmd.%n.pid").string() << "\n"
    << "SlurmctldLogFile=" << (dir / "slurmctld.log").string() << "\n"
    << "SlurmdLogFile=" << (dir / "slurmd.%n.log").string() << "\n"
    << "PlugStackConfig=" << (dir / "plugstack.conf").string()
    << "\n"
    // No cgroups in a container: processes tracked through /proc, no task binding.
    << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
    << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
    << "SwitchType=switch/none\nMpiDefault=none\nMailProg=/bin/true\n"
    << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
    << "SchedulerType=sched/builtin\nReturnToService=2\nInactiveLimit=0\nKillWait=5\nMinJobAge=300\n"
    << "GresTypes=gpu\n";
  for (int n = 1; n <= nodes; ++n)
    c << "NodeName=n" << n
      << " NodeHostname=localhost NodeAddr=127.0.0.1 Port=" << testing::free_loopback_port()
      << " CPUs=2 RealMemory=1000 Gres=gpu:" << gpus_per_node << " State=UNKNOWN\n";
  c << "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n";
  return c.str();
}

// GRES GPUs need character devices; each is /dev/null's (1, 3): SLURM only checks the kind and numbers
// them from the name, which is what sets CUDA_VISIBLE_DEVICES.
std::string gres_conf(const fs::path& dir, int gpus_per_node) {
  fs::create_directories(dir / "dev");
  for (int g = 0; g < gpus_per_node; ++g) {
    const auto device = dir / "dev" / ("nvidia" + std::to_string(g));
    if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
      throw std::runtime_error("cannot create the GRES device node " + device.string() +
                               " (mknod needs root)");
  }
  return "Name=gpu File=" + (dir / "dev").string() + "/nvidia[0-" + std::to_string(gpus_per_node - 1) + "]\n";
}

}  // namespace

std::string LocalCluster::program(const std::string& name) {
  std::string dirs = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  dirs += ":/usr/sbin:/sbin:/usr/bin";  // the daemons live in sbin, outside a user's PATH
  std::stringstream items(dirs);
  for (std::string d; std::getline(items, d, ':');) {
    const fs::path candidate = fs::path(d) / name;
    if (!d.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

std::optional<std::string> LocalCluster::unavailable_reason() {
  for (const char* name : {"munged", "slurmctld", "slurmd", "srun", "sinfo"})
    if (program(name).empty())
      return std::string(name) +
             " is not installed: apt-get install munge slurmctld slurmd slurm-client (./dev.sh installs "
             "them)";
  if (::geteuid() != 0)
    return std::string(
        "the local SLURM cluster runs as root (slurmd starts job steps, the GRES GPUs are device "
        "nodes made with mknod): run this test as root, as CI does");
  return std::nullopt;
}

LocalCluster::LocalCluster(const fs::path& dir, int nodes, int gpus_per_node, const std::string& extra_conf)
    : dir_(dir), conf_(dir / "slurm.conf") {
  try {
    fs::create_directories(dir_ / "state");
    for (int n = 1; n <= nodes; ++n) fs::create_directories(dir_ / "spool" / node_name(n));
    fs::create_directories(dir_ / "munge");
    fs::permissions(dir_ / "munge", fs::perms::owner_all);
    fs::create_directories(dir_ / "munge-socket");
    for (const auto& d : {dir_.parent_path(), dir_, dir_ / "munge-socket"})
      fs::permissions(d, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    write_munge_key(dir_ / "munge" / "munge.key");
    write_file(dir_ / "plugstack.conf", "");
    write_file(conf_, slurm_conf(dir_, nodes, gpus_per_node) + extra_conf);
    write_file(dir_ / "gres.conf", gres_conf(dir_, gpus_per_node));

    const auto socket = dir_ / "munge-socket" / "munge.socket";
    start_daemon("munged", {program("munged"), "-F", "--key-file=" + (dir_ / "munge" / "munge.key").string(),
                            "--socket=" + socket.string(), "--pid-file=" + (dir_ / "munge" / "pid").string(),
                            "--log-file=" + (dir_ / "munged.log").string(),
                            "--seed-file=" + (dir_ / "munge" / "seed").string()});
    for (auto waited = 0ms; !fs::exists(socket); waited += 50ms) {
      if (waited > 10s) throw std::runtime_error("munged made no socket in 10 s");
      std::this_thread::sleep_for(50ms);
    }
    start_daemon("slurmctld", {program("slurmctld"), "-D", "-f", conf_.string()});
    for (int n = 1; n <= nodes; ++n)
      start_daemon("slurmd-" + node_name(n),
                   {program("slurmd"), "-D", "-N", node_name(n), "-f", conf_.string()});
    wait_until_idle(nodes);
  } catch (const std::exception& e) {
    const std::string logs = log_tails();
    stop_all();
    std::string message = e.what();
    message += '\n';
    message += logs;
    throw std::runtime_error(message);
  }
}

LocalCluster::~LocalCluster() {
  stop_all();
}

Environment LocalCluster::client_environment(Environment env) const {
  env["SLURM_CONF"] = conf_.string();
  return env;
}

void LocalCluster::start_daemon(const std::string& name, const std::vector<std::string>& argv) {
  const auto log = dir_ / (name + ".out");
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed for " + name);
  if (pid == 0) {
    // Killed with the test, whatever ends it; the parent may have died before this line.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::string conf = "SLURM_CONF=" + conf_.string();
    char* env[] = {const_cast<char*>("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), conf.data(), nullptr};
    ::execve(args[0], args.data(), env);
    ::_exit(127);
  }
  daemons_.push_back({name, pid});
}

void LocalCluster::wait_until_idle(int nodes) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  SpawnOptions options;
  options.capture_dir = dir_;
  options.guard = 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    for (const auto& d : daemons_) {
      int status = 0;
      if (::waitpid(d.pid, &status, WNOHANG) == d.pid)
        throw std::runtime_error(d.name + " exited at start (status " + std::to_string(status) + ")");
    }
    const auto r = run_process({program("sinfo"), "-h", "-N", "-o", "%N %T"},
                               client_environment(minimal_environment()), options);
    int idle = 0;
    std::stringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
      if (line.find(" idle") != std::string::npos) ++idle;
    if (idle == nodes) return;
    std::this_thread::sleep_for(200ms);
  }
  throw std::runtime_error("the nodes were not idle within 30 s");
}

void LocalCluster::stop_all() {
  for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it) ::kill(it->pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  for (const auto& d : daemons_) {
    while (::waitpid(d.pid, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(d.pid, SIGKILL);
        ::waitpid(d.pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(20ms);
    }
  }
  daemons_.clear();
}

std::string LocalCluster::log_tails() const {
  std::string out;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const auto ext = entry.path().extension();
    if (ext == ".log" || ext == ".out")
      out += "  " + entry.path().filename().string() + ":\n" + last_lines(entry.path(), 8);
  }
  return out;
}

}  // namespace wattwise::e2e
