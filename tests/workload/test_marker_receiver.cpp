#include "workload/marker_receiver.hpp"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "workload/phases.hpp"
#include "workload/process.hpp"

namespace wattwise::workload {
namespace {

using namespace std::chrono_literals;

// Sends raw datagrams, as a job (or an attacker's malformed bytes) would.
void send_datagram(const std::filesystem::path& socket_path, const std::string& message) {
  int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof(address.sun_path) - 1);
  ssize_t sent =
      ::sendto(fd, message.data(), message.size(), 0, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  ::close(fd);
  ASSERT_EQ(sent, static_cast<ssize_t>(message.size()));
}

std::map<std::string, std::string> job_environment(const MarkerReceiver& receiver) {
  return {{MarkerReceiver::kEnvironmentVariable, receiver.socket_path().string()},
          {MarkerReceiver::kChangedUserEnvironmentVariable, receiver.changed_user_socket_path().string()}};
}

mode_t mode_of(const std::filesystem::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 0777;
}

TEST(MarkerReceiver, SocketsLiveInAPrivateDirectoryThatIsRemovedAfterwards) {
  std::filesystem::path directory;
  {
    MarkerReceiver receiver;
    directory = receiver.changed_user_socket_path().parent_path();
    // Others pass through to the changed-user socket; they cannot list the directory.
    EXPECT_EQ(mode_of(directory), 0711u);
    // The job's socket is in a directory only this user can enter (issue 22, item 4).
    EXPECT_EQ(receiver.socket_path().parent_path().parent_path(), directory);
    EXPECT_EQ(mode_of(receiver.socket_path().parent_path()), 0700u);
    EXPECT_TRUE(std::filesystem::is_socket(receiver.socket_path()));
    EXPECT_TRUE(std::filesystem::is_socket(receiver.changed_user_socket_path()));
  }
  EXPECT_FALSE(std::filesystem::exists(directory));
}

TEST(MarkerReceiver, KeepsArrivalOrderAndCountsMalformedMessages) {
  MarkerReceiver receiver;
  send_datagram(receiver.socket_path(), "ww1 B 10 epoch pid=1");
  send_datagram(receiver.socket_path(), "not a marker");
  send_datagram(receiver.socket_path(), "ww1 E 5 epoch pid=1 samples=8");
  send_datagram(receiver.socket_path(), std::string(20000, 'x'));  // longer than any marker may be
  receiver.stop();
  auto markers = receiver.markers();
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_EQ(markers[0].kind, MarkerKind::kBegin);
  EXPECT_EQ(markers[1].t, Nanos{5});  // arrival order, not timestamp order
  EXPECT_EQ(markers[1].counters.at("samples"), 8);
  EXPECT_EQ(receiver.malformed_count(), 2);
}

TEST(MarkerReceiver, MarkerTimesBetweenAreInTimeOrderWhateverTheArrivalOrder) {
  // Where phases will be cut, for the sampler's compaction: asked twice, with markers arriving in between,
  // one of them stamped before those already sorted (another process's clock read earlier).
  MarkerReceiver receiver;
  for (const char* m : {"ww1 B 100 a pid=1", "ww1 E 300 a pid=1", "ww1 B 500 b pid=1"})
    send_datagram(receiver.socket_path(), m);
  while (receiver.markers().size() < 3) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(receiver.marker_times_between(Nanos{0}, Nanos{1000}), (std::vector<Nanos>{100ns, 300ns, 500ns}));
  for (const char* m : {"ww1 E 700 b pid=1", "ww1 P 200 late pid=2"}) send_datagram(receiver.socket_path(), m);
  receiver.stop();
  EXPECT_EQ(receiver.marker_times_between(Nanos{150}, Nanos{700}),
            (std::vector<Nanos>{200ns, 300ns, 500ns, 700ns}));
  EXPECT_TRUE(receiver.marker_times_between(Nanos{800}, Nanos{900}).empty());
  EXPECT_TRUE(receiver.marker_times_between(Nanos{900}, Nanos{800}).empty());
}

TEST(MarkerReceiver, StopIsIdempotentAndMarkersStayReadable) {
  MarkerReceiver receiver;
  send_datagram(receiver.socket_path(), "ww1 P 1 x pid=1");
  receiver.stop();
  receiver.stop();
  EXPECT_EQ(receiver.markers().size(), 1u);
}

void expect_markers_from_sender_job(const std::vector<Marker>& markers, pid_t job_pid) {
  ASSERT_EQ(markers.size(), 5u);
  EXPECT_EQ(markers[0].name, "training");
  EXPECT_EQ(markers[0].kind, MarkerKind::kBegin);
  EXPECT_EQ(markers[3].name, "saved model=best");
  EXPECT_EQ(markers[3].kind, MarkerKind::kPoint);
  EXPECT_EQ(markers[2].counters.at("samples"), 128);
  EXPECT_EQ(markers[2].counters.at("loss"), 0.5);
  for (const auto& marker : markers) EXPECT_EQ(marker.pid, job_pid);
  // Same clock on both sides: the job's timestamps fall between our own readings around it.
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  EXPECT_LE(markers.back().t.count(), now.tv_sec * 1'000'000'000LL + now.tv_nsec);
  auto phases = build_phases(markers);
  EXPECT_EQ(phases.phases.size(), 3u);
  EXPECT_EQ(phases.unmatched_begins + phases.unmatched_ends, 0);
}

TEST(MarkerReceiver, ReceivesMarkersFromTheCClient) {
  MarkerReceiver receiver;
  auto job = Process::start({{WW_MARKER_SENDER, "enabled"}, job_environment(receiver), std::nullopt});
  ASSERT_EQ(job.wait({.timeout = 30s}), 0);
  receiver.stop();
  expect_markers_from_sender_job(receiver.markers(), job.pid());
  EXPECT_EQ(receiver.malformed_count(), 0);
}

// torchrun on the second of two 4-GPU nodes: global rank 5 drives this node's GPU 1. The rank that picks
// the GPU must be the local one (before: RANK was preferred, so rank=5, a GPU this node does not have).
TEST(MarkerReceiver, CClientSendsTheLocalRankAndTheGlobalRankAsALabel) {
  MarkerReceiver receiver;
  auto environment = job_environment(receiver);
  environment["RANK"] = "5";
  environment["LOCAL_RANK"] = "1";
  auto job = Process::start({{WW_MARKER_SENDER, "enabled"}, environment, std::nullopt});
  ASSERT_EQ(job.wait({.timeout = 30s}), 0);
  receiver.stop();
  const auto markers = receiver.markers();
  ASSERT_FALSE(markers.empty());
  for (const auto& m : markers) {
    EXPECT_EQ(m.rank, 1) << m.name;
    ASSERT_TRUE(m.counters.contains("global_rank")) << m.name;
    EXPECT_EQ(m.counters.at("global_rank"), 5) << m.name;
  }
}

TEST(MarkerReceiver, CClientIsASilentNoOpWithoutTheSocket) {
  ::unsetenv(MarkerReceiver::kEnvironmentVariable);
  auto job = Process::start({{WW_MARKER_SENDER, "disabled"}, {}, std::nullopt});
  EXPECT_EQ(job.wait({.timeout = 30s}), 0);
}

TEST(MarkerReceiver, CClientIsASilentNoOpWhenTheSocketIsGone) {
  auto job = Process::start(
      {{WW_MARKER_SENDER, "disabled"}, {{"WATTWISE_SOCKET", "/nonexistent/markers.sock"}}, std::nullopt});
  EXPECT_EQ(job.wait({.timeout = 30s}), 0);
}

TEST(MarkerReceiver, ReceivesMarkersFromThePythonClient) {
  std::string python3 = WW_PYTHON3;
  if (python3.empty()) GTEST_SKIP() << "python3 not found at configure time";
  MarkerReceiver receiver;
  auto environment = job_environment(receiver);
  environment["PYTHONPATH"] = WW_PYTHON_DIR;
  environment["RANK"] = "2";
  const char* script =
      "import wattwise\n"
      "with wattwise.phase('training'):\n"
      "    with wattwise.iteration(samples=32):\n"
      "        pass\n"
      "    wattwise.point('saved model=best')\n";
  auto job = Process::start({{python3, "-c", script}, environment, std::nullopt});
  ASSERT_EQ(job.wait({.timeout = 60s}), 0);
  receiver.stop();
  auto markers = receiver.markers();
  ASSERT_EQ(markers.size(), 5u);
  EXPECT_EQ(markers[1].name, "iteration");
  EXPECT_EQ(markers[2].counters.at("samples"), 32);
  EXPECT_EQ(markers[3].name, "saved model=best");
  EXPECT_EQ(markers[4].rank, 2);
  EXPECT_EQ(markers[4].pid, job.pid());
  EXPECT_EQ(build_phases(markers).phases.size(), 3u);
}

// Sends `message` from a forked process running as uid 65534 (nobody); `orphan`: from a grandchild whose
// parent exited first, so it is no longer a descendant of this process. The sender stays alive until
// `received()` holds (or 10 s pass): a sender's ancestry can be checked only while it exists. `reachable`:
// whether the send is expected to go through (else it must fail with EACCES).
// Only raw system calls after fork.
void send_as_other_user(const std::filesystem::path& socket_path, const std::string& message, bool orphan,
                        const std::function<bool()>& received, bool reachable = true) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof(address.sun_path) - 1);
  int sent_pipe[2], release_pipe[2];
  ASSERT_EQ(::pipe(sent_pipe), 0);
  ASSERT_EQ(::pipe(release_pipe), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(sent_pipe[0]);
    ::close(release_pipe[1]);
    const pid_t middle = ::getpid();
    if (orphan && ::fork() != 0) ::_exit(0);  // the middle process leaves; the grandchild is reparented
    while (orphan && ::getppid() == middle) ::usleep(1000);  // until the reparenting is visible
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    const ssize_t sent = ::sendto(fd, message.data(), message.size(), 0,
                                  reinterpret_cast<sockaddr*>(&address), sizeof(address));
    const char result = sent == static_cast<ssize_t>(message.size()) ? 'y' : errno == EACCES ? 'a' : 'n';
    if (::write(sent_pipe[1], &result, 1) != 1) ::_exit(3);
    char byte;
    while (::read(release_pipe[0], &byte, 1) > 0) {  // EOF: the test lets it go
    }
    ::_exit(0);
  }
  ::close(sent_pipe[1]);
  ::close(release_pipe[0]);
  char result = 0;
  EXPECT_EQ(::read(sent_pipe[0], &result, 1), 1);
  EXPECT_EQ(result, reachable ? 'y' : 'a');
  for (int i = 0; i < 1000 && reachable && !received(); ++i) std::this_thread::sleep_for(10ms);
  ::close(release_pipe[1]);
  ::close(sent_pipe[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
}

// Issue 10, item 14: markers from a job that changed user were lost silently (the directory was 0700).
// Such a process now sends to the changed-user socket.
TEST(MarkerReceiver, HearsAJobProcessThatChangedUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to change user";
  MarkerReceiver receiver;
  send_as_other_user(receiver.changed_user_socket_path(), "ww1 P 5 after-sudo pid=1", false,
                     [&] { return !receiver.markers().empty() || receiver.refused_count() > 0; });
  receiver.stop();
  ASSERT_EQ(receiver.markers().size(), 1u);
  EXPECT_EQ(receiver.markers()[0].name, "after-sudo");
  EXPECT_EQ(receiver.refused_count(), 0);
}

// Issue 22, item 4: a flood from another user filled the one queue, and the job's own clients dropped
// 1,223 markers. Another user cannot put a single datagram into the job's queue now: its send fails with
// EACCES, and its flood can fill only the changed-user socket's queue.
TEST(MarkerReceiver, HostileUserCannotReachTheJobsQueue) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to change user";
  MarkerReceiver receiver;
  send_as_other_user(receiver.socket_path(), "ww1 P 5 flood pid=1", true, [] { return true; },
                     /*reachable=*/false);
  receiver.stop();
  EXPECT_TRUE(receiver.markers().empty());
  EXPECT_EQ(receiver.refused_count(), 0);  // nothing came through to refuse
}

// The C client of a job process that changed user finds the job's socket out of reach and falls back to
// the changed-user socket; being the job's descendant, it is heard.
TEST(MarkerReceiver, CClientThatChangedUserFallsBackToTheChangedUserSocket) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to change user";
  MarkerReceiver receiver;
  std::vector<std::string> env_text;
  for (const auto& [name, value] : job_environment(receiver)) env_text.push_back(name + "=" + value);
  std::vector<char*> env;
  for (auto& entry : env_text) env.push_back(entry.data());
  env.push_back(nullptr);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    char* const argv[] = {const_cast<char*>(WW_MARKER_SENDER), const_cast<char*>("enabled"), nullptr};
    ::execve(WW_MARKER_SENDER, argv, env.data());
    ::_exit(127);
  }
  // Exited but not reaped: its /proc entry stays until waitpid, so the receiver's ancestry check can still
  // find it however late the receiving thread runs on a loaded machine (reaped first, it was refused).
  siginfo_t exited{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &exited, WEXITED | WNOWAIT), 0);
  for (int i = 0; i < 1000 && receiver.markers().size() + static_cast<std::size_t>(receiver.refused_count()) < 5; ++i)
    std::this_thread::sleep_for(10ms);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "127: nobody cannot execute " << WW_MARKER_SENDER;
  receiver.stop();
  expect_markers_from_sender_job(receiver.markers(), child);
  EXPECT_EQ(receiver.refused_count(), 0);
}

TEST(MarkerReceiver, RefusesAnotherUsersProcessOutsideTheJobAndSaysWhy) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to change user";
  // The sender below is orphaned to stand outside the job. An earlier test that started a job made this
  // process a subreaper (workload::become_child_subreaper), and an orphan is then reparented to it, a descendant
  // again, and heard: the test failed whenever it ran after one in the same process.
  int was_subreaper = 0;
  ASSERT_EQ(::prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper, 0, 0, 0), 0);
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
  struct RestoreSubreaper {
    int was;
    ~RestoreSubreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, was, 0, 0, 0); }
  } restore{was_subreaper};
  MarkerReceiver receiver;
  // The job's socket is out of its reach (HostileUserCannotReachTheJobsQueue); the changed-user one refuses.
  send_as_other_user(receiver.changed_user_socket_path(), "ww1 P 5 injected pid=1", true,
                     [&] { return !receiver.markers().empty() || receiver.refused_count() > 0; });
  receiver.stop();
  EXPECT_TRUE(receiver.markers().empty());
  EXPECT_EQ(receiver.refused_count(), 1);
  EXPECT_NE(receiver.refusal_reason().find("uid 65534"), std::string::npos) << receiver.refusal_reason();
}

}  // namespace
}  // namespace wattwise::workload
