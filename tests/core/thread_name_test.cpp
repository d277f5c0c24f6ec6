// Threads named for `top -H` and /proc/PID/task/*/comm, so an operator can tell what costs what.
#include "core/thread_name.hpp"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace wattwise {
namespace {

std::string own_comm() {
  std::ifstream in("/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

TEST(ThreadName, ANamedThreadRunsItsBodyUnderItsName) {
  std::string seen;
  named_thread("ww-test-thread", [&] { seen = own_comm(); }).join();
  EXPECT_EQ(seen, "ww-test-thread");
}

TEST(ThreadName, ANameLongerThanLinuxKeepsIsCutNotRefused) {
  std::string seen;
  named_thread("ww-a-name-longer-than-fifteen", [&] { seen = own_comm(); }).join();
  EXPECT_EQ(seen, std::string("ww-a-name-longer-than-fifteen").substr(0, 15));
}

}  // namespace
}  // namespace wattwise
