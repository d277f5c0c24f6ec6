// This process's direct children, from the full /proc walk and from the kernel's per-thread lists: the
// cheap lists must name the same children (a child forked by another thread included), with their state.
#include "workload/child_processes.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace wattwise::workload {
namespace {

pid_t fork_sleeper() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  return pid;
}

const ChildProcess* find(const std::vector<ChildProcess>& children, pid_t pid) {
  const auto it = std::find_if(children.begin(), children.end(), [&](const auto& c) { return c.pid == pid; });
  return it == children.end() ? nullptr : &*it;
}

TEST(ChildProcesses, TheTaskListsNameTheChildrenOfEveryThreadAsTheProcWalkDoes) {
  const auto lists = children_from_task_lists();
  if (!lists) GTEST_SKIP() << "this kernel builds no /proc/self/task/*/children lists (CONFIG_PROC_CHILDREN)";
  const pid_t from_main = fork_sleeper();
  ASSERT_GT(from_main, 0);
  pid_t from_thread = -1;
  std::thread([&] { from_thread = fork_sleeper(); }).join();  // the child's parent is this process
  ASSERT_GT(from_thread, 0);
  ::kill(from_thread, SIGKILL);
  // Until reaped it is a zombie, still a child: the periodic look reaps such ones.
  for (int i = 0; i < 200; ++i) {
    const auto walked = children_of_this_process();
    const ChildProcess* zombie = find(walked, from_thread);
    if (zombie != nullptr && zombie->state == 'Z') break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto walked = children_of_this_process();
  const auto listed = children_from_task_lists();
  ASSERT_TRUE(listed);
  for (pid_t pid : {from_main, from_thread}) {
    const ChildProcess* a = find(walked, pid);
    const ChildProcess* b = find(*listed, pid);
    ASSERT_NE(a, nullptr) << pid;
    ASSERT_NE(b, nullptr) << "the task lists missed child " << pid;
    EXPECT_EQ(a->state, b->state);
    EXPECT_EQ(a->process_group, b->process_group);
  }
  EXPECT_EQ(find(*listed, from_thread)->state, 'Z');
  EXPECT_EQ(listed->size(), walked.size());
  ::kill(from_main, SIGKILL);
  ::waitpid(from_main, nullptr, 0);
  ::waitpid(from_thread, nullptr, 0);
}

}  // namespace
}  // namespace wattwise::workload
