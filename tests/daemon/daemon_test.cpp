// The settings daemon as it runs: `wattwise daemon` as root against the fake NVML, its clients as other uids
// (setpriv), as issue 25's proof asks. Skipped where the tests do not run as root.
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "safety/journal.hpp"
#include "safety_support.hpp"
#include "store/results_store.hpp"
#include "start_in_own_group.hpp"

namespace wattwise::safety {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSetpriv = "/usr/bin/setpriv";
constexpr const char* kGpu0 = "GPU-safe-aaaa";
constexpr const char* kGpu1 = "GPU-safe-bbbb";
constexpr uid_t kNobody = 65534;
constexpr uid_t kOther = 65533;  // a uid without an account: the policy names it in digits

// The name the daemon gives a uid: its account's, else the digits (65534 is "nobody" on most systems).
std::string name_of(uid_t uid) {
  const passwd* entry = ::getpwuid(uid);
  return entry ? entry->pw_name : std::to_string(uid);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A process the test started (a client or the daemon), killed and reaped at the end.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::filesystem::path& dir, const std::string& name)
      : out_(dir / (name + ".out")), err_(dir / (name + ".err")) {
    pid_ = start_in_own_group(argv, out_, err_);
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  std::string out() const { return read_file(out_); }
  std::string err() const { return read_file(err_); }
  // Waits until stdout holds `text`; false after `timeout` (or when the process ended without it).
  bool wait_for_out(const std::string& text, std::chrono::milliseconds timeout = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out().find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline || (exited() && out().find(text) == std::string::npos))
        return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }
  bool exited() {
    if (reaped_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return reaped_;
  }
  int wait() {
    int status = 0;
    if (!reaped_) {
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      reaped_ = true;
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return exit_code_;
  }
  void kill(int signal_number) const { ::kill(pid_, signal_number); }

 private:
  std::filesystem::path out_, err_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_code_ = -1;
};

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the daemon runs as root and its clients as other uids";
    if (::access(kSetpriv, X_OK) != 0) GTEST_SKIP() << "setpriv (util-linux) is needed";
    world_.emplace();
    ::chmod(world_->dir().c_str(), 0755);  // the clients reach the socket in it
    socket_ = world_->dir() / "daemon.sock";
    policy_ = world_->dir() / "policy.json";
    write_policy(default_policy());
  }

  static nlohmann::json default_policy() {
    return {{"format", 1},
            {"rules",
             {{{"users", {std::to_string(kNobody)}},
               {"gpus", {0}},
               {"power_limit_w", {{"min", 300}, {"max", 650}}},
               {"sm_clock_mhz", {{"min", 900}}}},
              {{"users", {std::to_string(kOther)}}, {"power_limit_w", {{"min", 200}, {"max", 700}}}}}}};
  }

  void write_policy(const nlohmann::json& policy) {
    const auto temp = policy_.string() + ".tmp";
    std::ofstream(temp) << policy.dump(2);
    std::filesystem::rename(temp, policy_);
  }

  std::unique_ptr<Child> start_daemon() {
    auto daemon = std::make_unique<Child>(
        std::vector<std::string>{WATTWISE_BIN, "daemon", "--socket", socket_.string(), "--policy", policy_.string()},
        world_->dir(), "daemon-" + std::to_string(++started_));
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    struct stat info {};
    while (::stat(socket_.c_str(), &info) != 0 || !S_ISSOCK(info.st_mode) ||
           daemon->err().find("serving") == std::string::npos) {
      if (daemon->exited() || std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "the daemon did not start: " << daemon->err();
        break;
      }
      std::this_thread::sleep_for(5ms);
    }
    return daemon;
  }

  std::unique_ptr<Child> client(uid_t uid, std::vector<std::string> requests, bool hold = false) {
    std::vector<std::string> argv{kSetpriv, "--reuid=" + std::to_string(uid), "--regid=" + std::to_string(uid),
                                  "--clear-groups", DAEMON_CLIENT, socket_.string()};
    if (hold) argv.push_back("--hold");
    argv.insert(argv.end(), requests.begin(), requests.end());
    return std::make_unique<Child>(argv, world_->dir(), "client-" + std::to_string(++started_));
  }

  double limit(const char* uuid) const { return world_->limits_w().at(uuid); }

  std::optional<SafetyWorld> world_;
  std::filesystem::path socket_, policy_;
  int started_ = 0;
};

TEST_F(DaemonTest, PolicyAllowsAndRefusesAndEveryChangeIsLogged) {
  auto daemon = start_daemon();
  auto c = client(kNobody,
                  {"set 0 power_limit_w 300", "set 0 power_limit_w 250", "set 1 power_limit_w 300",
                   "set 0 sm_clock_mhz 600", "set 0 sm_clock_mhz 1500", "set 0 mem_clock_mhz 1593", "allowed"},
                  /*hold=*/true);
  ASSERT_TRUE(c->wait_for_out("holding")) << c->out() << c->err() << daemon->err();
  const std::string out = c->out();
  std::istringstream lines(out);
  std::vector<std::string> replies;
  for (std::string line; std::getline(lines, line);) replies.push_back(line);
  ASSERT_EQ(replies.size(), 8u) << out;
  EXPECT_EQ(replies[0].rfind("wwd1 ok GPU 0 power_limit_w 300 W", 0), 0u) << replies[0];
  EXPECT_EQ(replies[1], "wwd1 refused the policy " + policy_.string() +
                            " (rules[0]) lets " + name_of(kNobody) + " set power_limit_w on GPU 0 only within 300-650 W, not 250 W");
  EXPECT_EQ(replies[2].rfind("wwd1 refused the policy", 0), 0u) << replies[2];
  EXPECT_NE(replies[2].find("on other GPUs, not on GPU 1"), std::string::npos) << replies[2];
  EXPECT_NE(replies[3].find("only within >= 900 MHz, not 600 MHz"), std::string::npos) << replies[3];
  EXPECT_EQ(replies[4].rfind("wwd1 ok GPU 0 sm_clock_mhz 1500 MHz", 0), 0u) << replies[4];
  EXPECT_NE(replies[5].find("no rule that lets " + name_of(kNobody) + " set mem_clock_mhz"), std::string::npos) << replies[5];
  EXPECT_EQ(replies[6], "wwd1 ok power_limit_w 300-650 W on GPU 0; sm_clock_mhz >= 900 MHz on GPU 0");
  // What was allowed took; what was refused did not.
  EXPECT_EQ(limit(kGpu0), 300);
  EXPECT_EQ(limit(kGpu1), 650);
  const std::string log = daemon->err();
  EXPECT_NE(log.find("set uid=65534 (" + name_of(kNobody) + ") pid=" + std::to_string(c->pid()) +
                     " gpu=0 (GPU-safe-aaaa) power_limit_w: 650 W -> 300 W"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("gpu=0 (GPU-safe-aaaa) sm_clock_mhz"), std::string::npos) << log;

  c->kill(SIGTERM);  // the client ends: its GPU goes back
  EXPECT_TRUE(world_->wait_restored(650)) << daemon->err();
  EXPECT_TRUE(world_->journals().empty());
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0) << daemon->err();
}

TEST_F(DaemonTest, CheckAnswersAsSetWouldWithoutHoldingOrChangingAnything) {
  auto daemon = start_daemon();
  auto c = client(kNobody, {"check 0 power_limit_w 300", "check 0 power_limit_w 250", "check 1 power_limit_w 300",
                            "check 0 mem_clock_mhz 1593", "check 0 sm_clock_mhz 900", "check 7 power_limit_w 300",
                            "set 0 power_limit_w 250"});
  ASSERT_EQ(c->wait(), 0) << c->err();
  std::istringstream lines(c->out());
  std::vector<std::string> replies;
  for (std::string line; std::getline(lines, line);) replies.push_back(line);
  ASSERT_EQ(replies.size(), 7u) << c->out();
  EXPECT_EQ(replies[0], "wwd1 ok GPU 0 power_limit_w 300 W is allowed now; nothing was changed");
  // Refused with the very line `set` gives (the last request): one decision for both.
  const std::string refused_250 = "wwd1 refused the policy " + policy_.string() + " (rules[0]) lets " +
                                  name_of(kNobody) + " set power_limit_w on GPU 0 only within 300-650 W, not 250 W";
  EXPECT_EQ(replies[1], refused_250);
  EXPECT_EQ(replies[6], refused_250);
  EXPECT_NE(replies[2].find("on other GPUs, not on GPU 1"), std::string::npos) << replies[2];
  EXPECT_NE(replies[3].find("no rule that lets " + name_of(kNobody) + " set mem_clock_mhz"), std::string::npos)
      << replies[3];
  EXPECT_EQ(replies[4].rfind("wwd1 ok GPU 0 sm_clock_mhz 900 MHz", 0), 0u) << replies[4];
  EXPECT_NE(replies[5].find("there is no GPU 7"), std::string::npos) << replies[5];
  // Nothing changed, nothing held, nothing logged as a change.
  EXPECT_EQ(limit(kGpu0), 650);
  EXPECT_EQ(limit(kGpu1), 650);
  EXPECT_TRUE(world_->journals().empty());
  EXPECT_EQ(daemon->err().find("set uid="), std::string::npos) << daemon->err();
  EXPECT_EQ(daemon->err().find("restored uid="), std::string::npos) << daemon->err();

  // The owner rule applies as to set: while another user holds GPU 0, a check of it is refused naming them.
  auto holder = client(kOther, {"set 0 power_limit_w 400"}, /*hold=*/true);
  ASSERT_TRUE(holder->wait_for_out("holding")) << holder->out() << daemon->err();
  auto late = client(kNobody, {"check 0 power_limit_w 300"});
  ASSERT_EQ(late->wait(), 0) << late->err();
  EXPECT_NE(late->out().find("wwd1 refused GPU 0 is held by " + name_of(kOther) + " (uid 65533, pid " +
                             std::to_string(holder->pid()) + ")"),
            std::string::npos)
      << late->out();
  EXPECT_EQ(limit(kGpu0), 400);  // the holder's, untouched by the check
  holder->kill(SIGTERM);
  EXPECT_TRUE(world_->wait_restored(650)) << daemon->err();
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0) << daemon->err();
}

TEST_F(DaemonTest, AClientKilledWithSigkillHasItsGpuPutBackAtOnce) {
  auto daemon = start_daemon();
  auto c = client(kOther, {"set 0 power_limit_w 250", "set 1 power_limit_w 400"}, /*hold=*/true);
  ASSERT_TRUE(c->wait_for_out("holding")) << c->out() << daemon->err();
  ASSERT_EQ(limit(kGpu0), 250);
  ASSERT_EQ(limit(kGpu1), 400);
  const auto killed_at = std::chrono::steady_clock::now();
  c->kill(SIGKILL);
  ASSERT_TRUE(world_->wait_restored(650, 10s)) << daemon->err();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  // The issue's bar is one second; a loaded CI machine gets some slack, the time is printed for the record.
  std::printf("both GPUs back %.3f s after the client's SIGKILL\n", seconds);
  EXPECT_LT(seconds, 3.0);
  EXPECT_NE(daemon->err().find("ends (its connection closed): putting back GPU 0,1"), std::string::npos)
      << daemon->err();
}

TEST_F(DaemonTest, OneClientPerGpuTheSecondIsRefusedWithTheFirstsUserAndPid) {
  auto daemon = start_daemon();
  auto first = client(kNobody, {"set 0 power_limit_w 400"}, /*hold=*/true);
  ASSERT_TRUE(first->wait_for_out("holding")) << first->out() << daemon->err();
  auto second = client(kOther, {"set 0 power_limit_w 500", "set 1 power_limit_w 500"});
  EXPECT_EQ(second->wait(), 0);
  const std::string expected = "wwd1 refused GPU 0 is held by " + name_of(kNobody) + " (uid 65534, pid " +
                               std::to_string(first->pid()) + ") through the daemon";
  EXPECT_EQ(second->out().rfind(expected, 0), 0u) << second->out();
  EXPECT_NE(second->out().find("wwd1 ok GPU 1 power_limit_w 500 W"), std::string::npos) << second->out();
  EXPECT_EQ(limit(kGpu0), 400);  // the first client's setting stands
  // The second client exited: its GPU 1 went back, GPU 0 is still the first's.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (limit(kGpu1) != 650 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(limit(kGpu1), 650);
  EXPECT_EQ(limit(kGpu0), 400);
  first->kill(SIGKILL);
  ASSERT_TRUE(world_->wait_restored(650, 10s));
  auto third = client(kOther, {"set 0 power_limit_w 500"});  // free again
  EXPECT_EQ(third->wait(), 0);
  EXPECT_EQ(third->out().rfind("wwd1 ok GPU 0", 0), 0u) << third->out();
}

TEST_F(DaemonTest, AUserCannotChangeAGpuAnotherUsersJobHolds) {
  const auto owners = world_->dir() / "owners";
  std::filesystem::create_directory(owners);
  std::ofstream(owners / "gpu0") << kOther << " 4242\n";
  std::ofstream(owners / "gpu1") << kNobody << " 4243\n";
  nlohmann::json policy = default_policy();
  policy["rules"][0]["gpus"] = "all";
  policy["job_owner"] = {{"dir", owners.string()}};
  write_policy(policy);
  auto daemon = start_daemon();
  auto nobody = client(kNobody, {"set 0 power_limit_w 400", "set 1 power_limit_w 400"});
  EXPECT_EQ(nobody->wait(), 0);
  EXPECT_NE(nobody->out().find("wwd1 refused GPU 0 is held by job 4242 of 65533, not " + name_of(kNobody) +
                               ": only the owner of the job that holds a GPU may change it"),
            std::string::npos)
      << nobody->out();
  EXPECT_NE(nobody->out().find("wwd1 ok GPU 1 power_limit_w 400 W"), std::string::npos) << nobody->out();
  auto other = client(kOther, {"set 0 power_limit_w 400"});
  EXPECT_EQ(other->wait(), 0);
  EXPECT_EQ(other->out().rfind("wwd1 ok GPU 0", 0), 0u) << other->out();
  std::filesystem::remove(owners / "gpu0");  // the job ended: the epilog removed its file
  auto late = client(kOther, {"set 0 power_limit_w 400"});
  EXPECT_EQ(late->wait(), 0);
  EXPECT_NE(late->out().find("no job holds GPU 0"), std::string::npos) << late->out();
  EXPECT_TRUE(world_->wait_restored(650, 10s));
}

TEST_F(DaemonTest, AKilledDaemonRestartedRestoresFromItsJournalBeforeServing) {
  auto daemon = start_daemon();
  auto c = client(kOther, {"set 1 power_limit_w 300"}, /*hold=*/true);
  ASSERT_TRUE(c->wait_for_out("holding")) << c->out() << daemon->err();
  ASSERT_EQ(limit(kGpu1), 300);
  ASSERT_EQ(world_->journals().size(), 1u);
  // The daemon and its watchdog both killed (the machine's OOM killer, say): only the journal is left.
  std::optional<pid_t> watchdog;
  for (int i = 0; i < 2000 && !watchdog; ++i) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::string stat = read_file(entry.path() / "stat");
      const auto close = stat.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream fields(stat.substr(close + 2));
      char state = 0;
      pid_t ppid = 0;
      fields >> state >> ppid;
      if (ppid == daemon->pid()) watchdog = static_cast<pid_t>(std::stol(name));
    }
  }
  ASSERT_TRUE(watchdog) << "no watchdog under the daemon";
  ::kill(*watchdog, SIGKILL);
  daemon->kill(SIGKILL);
  daemon->wait();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(limit(kGpu1), 300);  // nobody restored it
  ASSERT_EQ(world_->journals().size(), 1u);
  auto restarted = start_daemon();  // returns once it serves
  EXPECT_EQ(limit(kGpu1), 650) << restarted->err();
  EXPECT_TRUE(world_->journals().empty());
  EXPECT_NE(restarted->err().find("restored from the journal"), std::string::npos) << restarted->err();
  // And it serves: the old client's connection is gone, a new one may take the GPU.
  auto again = client(kOther, {"set 1 power_limit_w 300"});
  EXPECT_EQ(again->wait(), 0);
  EXPECT_EQ(again->out().rfind("wwd1 ok GPU 1", 0), 0u) << again->out();
}

TEST_F(DaemonTest, AKilledDaemonsWatchdogPutsTheGpuBack) {
  auto daemon = start_daemon();
  auto c = client(kOther, {"set 0 power_limit_w 300"}, /*hold=*/true);
  ASSERT_TRUE(c->wait_for_out("holding")) << c->out() << daemon->err();
  ASSERT_EQ(limit(kGpu0), 300);
  daemon->kill(SIGKILL);
  EXPECT_TRUE(world_->wait_restored(650, 10s));
  EXPECT_TRUE(world_->journals().empty());
}

TEST_F(DaemonTest, AnInvalidPolicyIsRefusedWholeAtStartAndOnSighup) {
  std::ofstream(policy_) << R"({"format": 1, "rules": [{"users": ["65534"], "power_limt_w": {"max": 300}}]})";
  Child refused({WATTWISE_BIN, "daemon", "--socket", socket_.string(), "--policy", policy_.string()},
                world_->dir(), "refused");
  EXPECT_EQ(refused.wait(), 4);
  EXPECT_NE(refused.err().find("rules[0].power_limt_w is not a field of a rule"), std::string::npos)
      << refused.err();
  EXPECT_FALSE(std::filesystem::exists(socket_));

  write_policy(default_policy());
  auto daemon = start_daemon();
  std::ofstream(policy_) << "{";  // broken: the policy in force stays
  daemon->kill(SIGHUP);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (daemon->err().find("SIGHUP") == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  EXPECT_NE(daemon->err().find("SIGHUP: the new policy is refused whole and the previous one kept"),
            std::string::npos)
      << daemon->err();
  auto still = client(kNobody, {"set 0 power_limit_w 400"});
  EXPECT_EQ(still->wait(), 0);
  EXPECT_EQ(still->out().rfind("wwd1 ok", 0), 0u) << still->out();

  nlohmann::json narrower = default_policy();
  narrower["rules"][0]["power_limit_w"] = {{"min", 500}, {"max", 650}};
  write_policy(narrower);
  daemon->kill(SIGHUP);
  while (daemon->err().find("SIGHUP: policy") == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  auto narrowed = client(kNobody, {"set 0 power_limit_w 400"});
  EXPECT_EQ(narrowed->wait(), 0);
  EXPECT_NE(narrowed->out().find("only within 500-650 W, not 400 W"), std::string::npos) << narrowed->out();
}

TEST_F(DaemonTest, MalformedRequestsAreAnsweredAndAnOverlongLineEndsTheConnection) {
  auto daemon = start_daemon();
  auto c = client(kNobody, {"set 0 power_limit_w 400", "set 9 power_limit_w 400"});
  EXPECT_EQ(c->wait(), 0);
  EXPECT_NE(c->out().find("wwd1 refused there is no GPU 9 on this node (it has 2: 0-1)"), std::string::npos)
      << c->out();
  // Raw bytes: garbage, then a line past 256 bytes.
  auto raw = std::make_unique<Child>(
      std::vector<std::string>{kSetpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3",
                               "-c",
                               "import socket,sys\n"
                               "s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
                               "s.sendall(b'\\xff\\x00garbage\\nwwd1 allowed\\n' + b'x'*300)\n"
                               "print(s.recv(4096).decode('utf-8','replace'))\n"
                               "import time; time.sleep(0.2)\n"
                               "d=b''\n"
                               "while True:\n"
                               "  b=s.recv(4096)\n"
                               "  if not b: break\n"
                               "  d+=b\n"
                               "print(d.decode('utf-8','replace')); print('closed')\n",
                               socket_.string()},
      world_->dir(), "raw");
  EXPECT_EQ(raw->wait(), 0) << raw->err();
  const std::string out = raw->out();
  EXPECT_NE(out.find("wwd1 bad not a wattwise daemon request"), std::string::npos) << out;
  EXPECT_NE(out.find("wwd1 ok power_limit_w"), std::string::npos) << out;
  EXPECT_NE(out.find("wwd1 bad a request is one line of at most 256 bytes"), std::string::npos) << out;
  EXPECT_NE(out.find("closed"), std::string::npos) << out;
  EXPECT_TRUE(world_->wait_restored(650, 10s));
}

TEST_F(DaemonTest, InfoSaysWhetherTheDaemonIsReachableAndWhatThePolicyLetsThisUserDo) {
  const std::vector<std::string> info{kSetpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env",
                                      "WATTWISE_DAEMON_SOCKET=" + socket_.string(), WATTWISE_BIN, "info"};
  // The fake driver's state lock, which the real driver does not have, open to the other uid.
  const auto lock = world_->dir() / "fake_nvml.json.state.lock";
  std::ofstream{lock};
  ::chmod(lock.c_str(), 0666);
  auto daemon = start_daemon();
  Child reachable(info, world_->dir(), "info-reachable");
  EXPECT_EQ(reachable.wait(), 0) << reachable.err();
  EXPECT_NE(reachable.out().find("settings daemon: reachable at " + socket_.string() +
                                 "; the policy lets you: power_limit_w 300-650 W on GPU 0; sm_clock_mhz >= 900 MHz "
                                 "on GPU 0\n"),
            std::string::npos)
      << reachable.out() << reachable.err();
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0);
  Child none(info, world_->dir(), "info-none");
  EXPECT_EQ(none.wait(), 0) << none.err();
  EXPECT_NE(none.out().find("settings daemon: none at " + socket_.string() + ": changing settings needs root"),
            std::string::npos)
      << none.out();
}

// The commands as a user who is not root (docs/operators.md "Who changes the settings"): `sweep`, `tune` and
// the node agent (`measure --power-limit`) change the GPU through the daemon, and it is back when they end.
class CommandsThroughTheDaemon : public DaemonTest {
 protected:
  void SetUp() override {
    DaemonTest::SetUp();
    if (IsSkipped()) return;
    user_dir_ = world_->dir() / "user";
    std::filesystem::create_directories(user_dir_);
    ::chmod(user_dir_.c_str(), 0777);
    // The fake driver's state lock, which the real driver does not have, open to the other uid.
    const auto lock = world_->dir() / "fake_nvml.json.state.lock";
    std::ofstream{lock};
    ::chmod(lock.c_str(), 0666);
  }

  // wattwise ARGS as uid 65534, with its own state directory and the daemon's socket.
  std::unique_ptr<Child> as_nobody(const std::vector<std::string>& args) {
    std::vector<std::string> argv{kSetpriv,
                                  "--reuid=65534",
                                  "--regid=65534",
                                  "--clear-groups",
                                  "/usr/bin/env",
                                  "WATTWISE_DAEMON_SOCKET=" + socket_.string(),
                                  "WATTWISE_STATE_DIR=" + (user_dir_ / "state").string(),
                                  "HOME=" + user_dir_.string(),
                                  std::string("PYTHONPATH=") + PYTHON_DIR,
                                  WATTWISE_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<Child>(argv, world_->dir(), "wattwise-" + std::to_string(++started_));
  }

  // Waits for `c` to end, noting every limit GPU 0 held meanwhile.
  int wait_noting_limits(Child& c, std::set<double>& seen) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (!c.exited() && std::chrono::steady_clock::now() < deadline) {
      seen.insert(limit(kGpu0));
      std::this_thread::sleep_for(10ms);
    }
    return c.wait();
  }

  std::filesystem::path user_dir_;
};

TEST_F(CommandsThroughTheDaemon, ASweepAsAnotherUserSetsTheGpuThroughTheDaemonAndItIsPutBack) {
  auto daemon = start_daemon();
  const auto db = user_dir_ / "sweep.db";
  auto sweep = as_nobody({"sweep", "--gpus", "0", "--power-limit", "300,400", "--db", db.string(), "--",
                          "/bin/sh", "-c", "sleep 0.3"});
  std::set<double> seen;
  ASSERT_EQ(wait_noting_limits(*sweep, seen), 0) << sweep->err() << daemon->err();
  EXPECT_TRUE(seen.contains(300) && seen.contains(400)) << sweep->err();
  // What each run read back is what the daemon set; the database says who changed it.
  const auto store = store::ResultsStore::open_read_only(db);
  std::set<double> enforced;
  for (const auto& run : store.runs())
    for (const auto& gpu : run.gpus)
      if (gpu.enforced_power_limit_w) enforced.insert(*gpu.enforced_power_limit_w);
  EXPECT_EQ(enforced, (std::set<double>{300, 400}));
  EXPECT_EQ(store.meta("settings_changed_by"), "daemon");
  EXPECT_TRUE(world_->wait_restored(650)) << daemon->err();
  EXPECT_EQ(limit(kGpu1), 650);
  const std::string log = daemon->err();
  EXPECT_NE(log.find("set uid=65534 (" + name_of(kNobody) + ")"), std::string::npos) << log;
  EXPECT_NE(log.find("restored uid=65534"), std::string::npos) << log;
  EXPECT_TRUE(world_->journals().empty());
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0) << daemon->err();
}

TEST_F(CommandsThroughTheDaemon, TuneAsAnotherUserSetsTheGpuThroughTheDaemonAndItIsPutBack) {
  // The system's Python, which every user may run (a per-user one, e.g. pyenv's, may not be).
  constexpr const char* kPython = "/usr/bin/python3";
  if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " runs the tune job";
  auto daemon = start_daemon();
  const auto db = user_dir_ / "tune.db";
  const auto json = user_dir_ / "tune.json";
  // The captured 650 W lies outside --range 300:450: the search starts by applying 450 W.
  auto tune = as_nobody({"tune", "--gpus", "0", "--range", "300:450", "--stationary-window", "1", "--db",
                         db.string(), "--json", json.string(), "--", kPython, std::string(E2E_JOBS_DIR) + "/tune_job.py",
                         "4", "40", "ok", user_dir_.string()});
  std::set<double> seen;
  ASSERT_EQ(wait_noting_limits(*tune, seen), 0) << tune->err() << daemon->err();
  EXPECT_TRUE(seen.contains(450)) << tune->err();
  for (double w : seen) EXPECT_TRUE(w == 650 || (w >= 300 && w <= 450)) << w;
  EXPECT_EQ(nlohmann::json::parse(read_file(json)).at("settings_changed_by"), "daemon");
  EXPECT_EQ(store::ResultsStore::open_read_only(db).meta("settings_changed_by"), "daemon");
  EXPECT_TRUE(world_->wait_restored(650)) << daemon->err();
  EXPECT_NE(daemon->err().find("set uid=65534"), std::string::npos) << daemon->err();
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0) << daemon->err();
}

TEST_F(CommandsThroughTheDaemon, TheNodeAgentAsAnotherUserSetsTheGpuThroughTheDaemonAndSaysSo) {
  auto daemon = start_daemon();
  const auto json = user_dir_ / "measure.json";
  auto agent = as_nobody({"measure", "--no-status", "--gpus", "0", "--power-limit", "350", "--json", json.string(),
                          "--", "/bin/sh", "-c", "sleep 0.3"});
  std::set<double> seen;
  ASSERT_EQ(wait_noting_limits(*agent, seen), 0) << agent->err() << daemon->err();
  EXPECT_TRUE(seen.contains(350));
  const auto settings = nlohmann::json::parse(read_file(json)).at("settings");
  EXPECT_EQ(settings.at("changed_by"), "daemon");
  EXPECT_EQ(settings.at("restored"), true);
  EXPECT_EQ(settings.at("gpus").at(0).at("enforced_power_limit_w"), 350);
  EXPECT_TRUE(world_->wait_restored(650)) << daemon->err();
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0) << daemon->err();
}

TEST_F(CommandsThroughTheDaemon, AValueThePolicyRefusesStopsTheSweepBeforeItsJobWithTheRuleNamed) {
  auto daemon = start_daemon();
  const auto ran = user_dir_ / "ran";
  // The policy lets nobody set 300-650 W on GPU 0: 250 W is the GPU's to take, not the policy's.
  auto sweep = as_nobody({"sweep", "--gpus", "0", "--power-limit", "250", "--db", (user_dir_ / "sweep.db").string(),
                          "--", "/bin/sh", "-c", "touch " + ran.string()});
  EXPECT_EQ(sweep->wait(), 2) << sweep->err();
  EXPECT_NE(sweep->err().find("the wattwise daemon refused: the policy " + policy_.string() + " (rules[0]) lets " +
                              name_of(kNobody) + " set power_limit_w on GPU 0 only within 300-650 W, not 250 W"),
            std::string::npos)
      << sweep->err();
  EXPECT_FALSE(std::filesystem::exists(ran)) << "the job ran";
  EXPECT_EQ(limit(kGpu0), 650);
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0);
}

// One line on stderr that holds `text`, and nothing else there.
void expect_one_line(const std::string& err, const std::string& text) {
  EXPECT_NE(err.find(text), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST_F(CommandsThroughTheDaemon, ASweepWithOneRefusedValueInTheMiddleStopsBeforeRunOneWithNoDatabase) {
  auto daemon = start_daemon();
  const auto ran = user_dir_ / "ran";
  const auto db = user_dir_ / "sweep.db";
  // A 155-run sweep: 300-453 W are allowed; 250 W, the 78th value, is not: it is found before the first run,
  // not at run 78.
  std::string values;
  for (int w = 300; w < 454; ++w) values += (w == 377 ? "250," : "") + std::to_string(w) + (w < 453 ? "," : "");
  ASSERT_EQ(std::count(values.begin(), values.end(), ','), 154);
  const auto started = std::chrono::steady_clock::now();
  auto sweep = as_nobody({"sweep", "--gpus", "0", "--power-limit", values, "--db", db.string(), "--", "/bin/sh",
                          "-c", "touch " + ran.string()});
  EXPECT_EQ(sweep->wait(), 2) << sweep->err();
  std::printf("the refused 78th value of 155 stopped the sweep %.3f s after it started\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  expect_one_line(sweep->err(), "the wattwise daemon refused: the policy " + policy_.string() + " (rules[0]) lets " +
                                    name_of(kNobody) +
                                    " set power_limit_w on GPU 0 only within 300-650 W, not 250 W (value 250 of "
                                    "--power-limit): leave that value out or ask the administrator");
  EXPECT_FALSE(std::filesystem::exists(ran)) << "the job ran";
  EXPECT_FALSE(std::filesystem::exists(db)) << "a database was left behind";
  EXPECT_EQ(limit(kGpu0), 650);
  EXPECT_TRUE(world_->journals().empty());
  EXPECT_EQ(daemon->err().find("set uid="), std::string::npos) << daemon->err();
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0);
}

TEST_F(CommandsThroughTheDaemon, ASweepsDryRunAsksTheDaemonAndSaysWhatTheRealSweepWouldMeet) {
  auto daemon = start_daemon();
  const auto ran = user_dir_ / "ran";
  const auto db = user_dir_ / "sweep.db";
  const std::vector<std::string> job = {"--", "/bin/sh", "-c", "touch " + ran.string()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), job.begin(), job.end());
    return as_nobody(args);
  };
  // Allowed values: the plan, and who would change the settings.
  auto allowed = with({"sweep", "--dry-run", "--gpus", "0", "--power-limit", "300,400", "--db", db.string()});
  EXPECT_EQ(allowed->wait(), 0) << allowed->err();
  EXPECT_NE(allowed->out().find("settings: changed through the wattwise daemon, whose policy allows every value"),
            std::string::npos)
      << allowed->out();
  // A value the policy refuses: the real sweep's one line and exit code, before anyone waits for run 1.
  auto refused = with({"sweep", "--dry-run", "--gpus", "0", "--power-limit", "300,250", "--db", db.string()});
  EXPECT_EQ(refused->wait(), 2) << refused->err();
  expect_one_line(refused->err(), "only within 300-650 W, not 250 W (value 250 of --power-limit)");
  // Neither changed, held, ran nor wrote anything.
  EXPECT_FALSE(std::filesystem::exists(ran)) << "the job ran";
  EXPECT_FALSE(std::filesystem::exists(db));
  EXPECT_EQ(limit(kGpu0), 650);
  EXPECT_TRUE(world_->journals().empty());
  EXPECT_EQ(daemon->err().find("set uid="), std::string::npos) << daemon->err();
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0);
}

TEST_F(CommandsThroughTheDaemon, TuneChecksItsWholeRangeBeforeTheJobRuns) {
  auto daemon = start_daemon();
  const auto ran = user_dir_ / "ran";
  const auto db = user_dir_ / "tune.db";
  // The policy's floor is 300 W: a --range from 250 W has candidates the daemon refuses.
  auto tune = as_nobody({"tune", "--gpus", "0", "--range", "250:450", "--db", db.string(), "--", "/bin/sh", "-c",
                         "touch " + ran.string()});
  EXPECT_EQ(tune->wait(), 2) << tune->err();
  expect_one_line(tune->err(), "only within 300-650 W, not 250 W (value 250 of --range)");
  EXPECT_FALSE(std::filesystem::exists(ran)) << "the job ran";
  EXPECT_FALSE(std::filesystem::exists(db));
  EXPECT_EQ(limit(kGpu0), 650);
  EXPECT_EQ(daemon->err().find("set uid="), std::string::npos) << daemon->err();
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0);
}

TEST_F(CommandsThroughTheDaemon, NoDaemonAsAnotherUserIsOneLineBeforeTheJobStarts) {
  auto daemon = start_daemon();
  const auto ran = user_dir_ / "ran";
  const std::vector<std::string> job{"--", "/bin/sh", "-c", "touch " + ran.string()};
  const auto with_job = [&](std::vector<std::string> args) {
    args.insert(args.end(), job.begin(), job.end());
    return args;
  };
  const std::string line = "changing GPU settings needs root, and --no-daemon refuses the wattwise daemon";
  auto sweep = as_nobody(with_job({"sweep", "--no-daemon", "--gpus", "0", "--power-limit", "300", "--db",
                                   (user_dir_ / "sweep.db").string()}));
  EXPECT_EQ(sweep->wait(), 3);
  expect_one_line(sweep->err(), line);
  EXPECT_FALSE(std::filesystem::exists(user_dir_ / "sweep.db"));
  auto tune = as_nobody(with_job({"tune", "--no-daemon", "--gpus", "0"}));
  EXPECT_EQ(tune->wait(), 3);
  expect_one_line(tune->err(), line);
  auto agent = as_nobody(with_job({"measure", "--no-daemon", "--gpus", "0", "--power-limit", "300"}));
  EXPECT_EQ(agent->wait(), 3);
  expect_one_line(agent->err(), line);
  EXPECT_FALSE(std::filesystem::exists(ran)) << "a job ran";
  EXPECT_EQ(limit(kGpu0), 650);
  EXPECT_EQ(daemon->err().find("set uid="), std::string::npos) << daemon->err();
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0);
}

TEST_F(CommandsThroughTheDaemon, NeitherRootNorADaemonIsOneLineBeforeTheJobStarts) {
  const auto ran = user_dir_ / "ran";
  const std::string line = "changing GPU settings needs root or the wattwise daemon, and no daemon listens at " +
                           socket_.string();
  auto sweep = as_nobody({"sweep", "--gpus", "0", "--power-limit", "300", "--db", (user_dir_ / "sweep.db").string(),
                          "--", "/bin/sh", "-c", "touch " + ran.string()});
  EXPECT_EQ(sweep->wait(), 3);
  expect_one_line(sweep->err(), line);
  auto tune = as_nobody({"tune", "--gpus", "0", "--", "/bin/sh", "-c", "touch " + ran.string()});
  EXPECT_EQ(tune->wait(), 3);
  expect_one_line(tune->err(), line);
  EXPECT_FALSE(std::filesystem::exists(user_dir_ / "sweep.db"));
  EXPECT_FALSE(std::filesystem::exists(ran)) << "a job ran";
  EXPECT_EQ(limit(kGpu0), 650);
}

TEST_F(CommandsThroughTheDaemon, RootChangesTheSettingsItselfAndTheResultsSaySo) {
  auto daemon = start_daemon();  // there, but root needs it not
  const auto db = world_->dir() / "root.db";
  const Finished root = run_wattwise(world_->dir(), {"sweep", "--gpus", "0", "--power-limit", "300", "--db",
                                                     db.string(), "--", "/bin/sh", "-c", "true"});
  ASSERT_EQ(root.exit_code, 0) << root.err;
  EXPECT_EQ(store::ResultsStore::open_read_only(db).meta("settings_changed_by"), "root");
  EXPECT_EQ(daemon->err().find("set uid="), std::string::npos) << daemon->err();
  EXPECT_EQ(limit(kGpu0), 650);
  daemon->kill(SIGTERM);
  EXPECT_EQ(daemon->wait(), 0);
}

}  // namespace
}  // namespace wattwise::safety
