// The job's process tree from a /proc laid out by the test: descendants, its process group, and pids
// remembered after they exit.
#include "workload/process_tree.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "../support/temp_dir.hpp"

namespace wattwise::workload {
namespace {

class ProcessTreeTest : public ::testing::Test {
 protected:
  void add(pid_t pid, pid_t parent, pid_t group, const std::string& comm = "job") {
    std::filesystem::create_directories(root_ / std::to_string(pid));
    std::ofstream(root_ / std::to_string(pid) / "stat")
        << pid << " (" << comm << ") S " << parent << " " << group << " " << group << " 0 -1\n";
  }
  void remove(pid_t pid) { std::filesystem::remove_all(root_ / std::to_string(pid)); }

  const wattwise::testing::TempDir temp_{"ww-proc"};
  const std::filesystem::path& root_ = temp_.path();
};

TEST_F(ProcessTreeTest, TheJobAndEveryDescendantAreInTheTree) {
  add(100, 1, 100);
  add(101, 100, 100);
  add(102, 101, 55);  // a grandchild that left the job's process group
  add(200, 1, 200);   // someone else's
  JobProcessTree tree(100, root_);
  tree.refresh();
  EXPECT_TRUE(tree.contains(100));
  EXPECT_TRUE(tree.contains(101));
  EXPECT_TRUE(tree.contains(102));
  EXPECT_FALSE(tree.contains(200));
}

TEST_F(ProcessTreeTest, AReparentedMemberOfTheJobsGroupIsInTheTree) {
  add(100, 1, 100);
  add(150, 7, 100);  // orphaned, reparented to wattwise (pid 7), still in the job's group
  JobProcessTree tree(100, root_);
  tree.refresh();
  EXPECT_TRUE(tree.contains(150));
}

TEST_F(ProcessTreeTest, ACommandNameWithSpacesAndParenthesesIsRead) {
  add(100, 1, 100);
  add(101, 100, 100, "python (rank 0) x");
  JobProcessTree tree(100, root_);
  tree.refresh();
  EXPECT_TRUE(tree.contains(101));
}

TEST_F(ProcessTreeTest, PidsSeenOnceAreRememberedAfterTheyExit) {
  add(100, 1, 100);
  add(101, 100, 100);
  JobProcessTree tree(100, root_);
  tree.refresh();
  remove(101);
  tree.refresh();
  EXPECT_TRUE(tree.contains(101));
  EXPECT_FALSE(tree.visible_here(101));
  EXPECT_TRUE(tree.visible_here(100));
}

TEST_F(ProcessTreeTest, TheRealTreeHoldsThisProcessAndItsChild) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  JobProcessTree tree(::getpid());
  tree.refresh();
  EXPECT_TRUE(tree.contains(child));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace wattwise::workload
