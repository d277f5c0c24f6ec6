// The C client against a receiver that never reads (wattwise stalled): sends must not block the job.
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "../support/temp_dir.hpp"
#include "wattwise/markers.h"

namespace {

// Issue 10, item 14: the client's 100 ms send time-out held the training loop for 100 ms per marker while
// the receiver stalled. Now a marker that does not fit is dropped and counted at once.
TEST(MarkerClient, StalledReceiverNeverBlocksTheJobAndDropsAreCounted) {
  const wattwise::testing::TempDir directory("ww-client");
  const std::string path = (directory / "markers.sock").string();
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
}

// Issue 22, item 11: a client that met an overloaded wattwise once (its connection closed without a reply)
// never asked again. It pauses 1 s now, then asks again.
TEST(WindowClient, AWattwiseThatWasBusyOnceIsAskedAgainAfterAPause) {
  const wattwise::testing::TempDir directory("ww-window");
  const std::string path = (directory / "window.sock").string();
  const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  std::atomic<int> connections{0};
  std::thread server([&] {
    for (;;) {
      const int fd = ::accept(listener, nullptr, nullptr);
      if (fd < 0) return;
      if (++connections > 1) {
        char request[256];
        (void)::recv(fd, request, sizeof request, 0);
        const std::string reply = "ww1 ok energy_j=2 duration_s=1 method=samples gpus=0:2\n";
        (void)::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
      }
      ::close(fd);  // the first: closed without a reply, as a wattwise with too many requests may
    }
  });
  ::setenv("WATTWISE_WINDOW_SOCKET", path.c_str(), 1);
  ww_window window{};
  ww_window_begin(&window, "epoch");
  ww_window_end(&window, "epoch");
  ww_window_energy energy{};
  EXPECT_EQ(ww_window_read(&window, 2000, &energy), 0);  // closed without a reply
  EXPECT_EQ(ww_window_read(&window, 2000, &energy), 0);  // paused: not asked
  EXPECT_EQ(connections.load(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(ww_window_read(&window, 2000, &energy), 1) << energy.reason;
  EXPECT_EQ(energy.energy_j, 2);
  EXPECT_EQ(connections.load(), 2);
  ::shutdown(listener, SHUT_RDWR);
  ::close(listener);
  server.join();
  ::unlink(path.c_str());
}

}  // namespace
