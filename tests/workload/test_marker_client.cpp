// The C client against a receiver that never reads (wattwise stalled): sends must not block the job.
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "wattwise/markers.h"

namespace {

// Issue 10, item 14: the client's 100 ms send time-out held the training loop for 100 ms per marker while
// the receiver stalled. Now a marker that does not fit is dropped and counted at once.
TEST(MarkerClient, StalledReceiverNeverBlocksTheJobAndDropsAreCounted) {
  char directory[] = "/tmp/ww-client-XXXXXX";
  ASSERT_NE(::mkdtemp(directory), nullptr);
  const std::string path = std::string(directory) + "/markers.sock";
  const int receiver = ::socket(AF_UNIX, SOCK_DGRAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::bind(receiver, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ::setenv("WATTWISE_SOCKET", path.c_str(), 1);  // read once, at the first call below

  ASSERT_EQ(ww_enabled(), 1);
  std::chrono::nanoseconds slowest{0};
  for (int i = 0; i < 5000 && ww_dropped() == 0 && slowest < std::chrono::milliseconds(50); ++i) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ww_point("iteration"), 0);
    slowest = std::max(slowest, std::chrono::steady_clock::now() - start);
  }
  EXPECT_LT(slowest, std::chrono::milliseconds(50));
  EXPECT_GT(ww_dropped(), 0u);

  // The receiver catches up: the next marker tells it how many were lost.
  char buffer[8192];
  while (::recv(receiver, buffer, sizeof buffer, MSG_DONTWAIT) > 0) {
  }
  ASSERT_EQ(ww_point("after"), 0);
  const ssize_t length = ::recv(receiver, buffer, sizeof buffer, MSG_DONTWAIT);
  ASSERT_GT(length, 0);
  const std::string message(buffer, static_cast<std::size_t>(length));
  EXPECT_NE(message.find(" ww_dropped=" + std::to_string(ww_dropped())), std::string::npos) << message;
  ::close(receiver);
  std::filesystem::remove_all(directory);
}

}  // namespace
