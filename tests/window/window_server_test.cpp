#include "window/window_server.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace wattwise::window {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// A connected client socket (blocking, with a receive time-out so that a broken server fails the test
// instead of hanging it).
int connect_to(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0) << std::strerror(errno);
  timeval timeout{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  return fd;
}

std::string read_reply(int fd) {
  std::string reply;
  char buffer[512];
  while (reply.find('\n') == std::string::npos) {
    const ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
    if (got <= 0) break;
    reply.append(buffer, static_cast<std::size_t>(got));
  }
  return reply;
}

std::string ask(const std::filesystem::path& path, const std::string& request) {
  const int fd = connect_to(path);
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string reply = read_reply(fd);
  ::close(fd);
  return reply;
}

WindowAnswer ok_answer(double energy_j) {
  WindowAnswer answer;
  answer.status = WindowAnswer::Status::kOk;
  answer.energy_j = energy_j;
  answer.method = "samples";
  answer.gpus = {{0, energy_j}};
  return answer;
}

// Serves on its own thread for the test's length.
class Serving {
 public:
  Serving(WindowServer& server, WindowServer::Resolver resolve) : resolve_(std::move(resolve)) {
    thread_ = std::thread([this, &server] { server.serve(resolve_, stop_); });
  }
  ~Serving() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  WindowServer::Resolver resolve_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(WindowServer, TheSocketIsReachableByThisUserOnly) {
  WindowServer server;
  struct stat socket_stat {};
  struct stat directory_stat {};
  ASSERT_EQ(::stat(server.socket_path().c_str(), &socket_stat), 0);
  ASSERT_EQ(::stat(server.socket_path().parent_path().c_str(), &directory_stat), 0);
  EXPECT_EQ(socket_stat.st_mode & 0777, 0600u);
  EXPECT_EQ(directory_stat.st_mode & 0777, 0700u);
  const auto directory = server.socket_path().parent_path();
  { WindowServer gone; }
  EXPECT_TRUE(std::filesystem::exists(directory));  // another server's directory is its own
}

TEST(WindowServer, ARequestIsAnsweredWithTheResolversEnergyForItsWindow) {
  WindowServer server;
  std::atomic<long long> asked_begin_ns{0};
  Serving serving(server, [&](const WindowRequest& request) -> std::optional<WindowAnswer> {
    asked_begin_ns = request.begin.count();
    return ok_answer(to_seconds(request.end - request.begin) * 300);
  });
  const auto reply = parse_window_reply(ask(server.socket_path(), "ww1 W 1000000000 3000000000 rank=0\n"));
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, WindowAnswer::Status::kOk);
  EXPECT_DOUBLE_EQ(reply->energy_j, 600.0);
  EXPECT_EQ(asked_begin_ns.load(), 1000000000LL);
  serving.stop();
  EXPECT_EQ(server.counts().answered, 1u);
}

TEST(WindowServer, AWindowWhoseReadingsAreNotInYetIsAnsweredOnceTheyAre) {
  WindowServer server;
  std::atomic<bool> covered{false};
  std::atomic<int> tries{0};
  Serving serving(server, [&](const WindowRequest&) -> std::optional<WindowAnswer> {
    ++tries;
    if (!covered) return std::nullopt;
    return ok_answer(42);
  });
  std::thread later([&] {
    std::this_thread::sleep_for(200ms);
    covered = true;
  });
  const auto reply = parse_window_reply(ask(server.socket_path(), "ww1 W 1 2\n"));
  later.join();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, WindowAnswer::Status::kOk);
  EXPECT_DOUBLE_EQ(reply->energy_j, 42.0);
  EXPECT_GE(tries.load(), 2);  // asked again while waiting, not answered "unavailable" at once
}

TEST(WindowServer, AWindowNeverCoveredIsAnsweredUnavailableAfterTheWait) {
  WindowServerLimits limits;
  limits.answer_wait = 300ms;
  WindowServer server(limits);
  Serving serving(server, [](const WindowRequest&) { return std::optional<WindowAnswer>(); });
  const auto start = SteadyClock::now();
  const auto reply = parse_window_reply(ask(server.socket_path(), "ww1 W 1 2\n"));
  const auto waited = SteadyClock::now() - start;
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, WindowAnswer::Status::kUnavailable);
  EXPECT_NE(reply->reason.find("did not cover"), std::string::npos) << reply->reason;
  EXPECT_GE(waited, 300ms);
}

TEST(WindowServer, MalformedAndOversizedRequestsGetABadReplyAndServingGoesOn) {
  WindowServer server;
  Serving serving(server, [](const WindowRequest&) { return std::optional<WindowAnswer>(ok_answer(1)); });
  const auto garbage = parse_window_reply(ask(server.socket_path(), std::string("\x01\xff garbage\n", 11)));
  ASSERT_TRUE(garbage);
  EXPECT_EQ(garbage->status, WindowAnswer::Status::kBad);
  const auto oversized = parse_window_reply(ask(server.socket_path(), std::string(100000, 'x')));
  ASSERT_TRUE(oversized);
  EXPECT_EQ(oversized->status, WindowAnswer::Status::kBad);
  EXPECT_NE(oversized->reason.find("256 bytes"), std::string::npos) << oversized->reason;
  const auto good = parse_window_reply(ask(server.socket_path(), "ww1 W 1 2\n"));
  ASSERT_TRUE(good);
  EXPECT_EQ(good->status, WindowAnswer::Status::kOk);
  serving.stop();
  EXPECT_EQ(server.counts().bad, 2u);
  EXPECT_EQ(server.counts().answered, 1u);
}

TEST(WindowServer, ASilentClientDoesNotDelayTheNextOne) {
  WindowServerLimits limits;
  limits.request_timeout = 20s;  // the silent client would hold its place this long
  WindowServer server(limits);
  Serving serving(server, [](const WindowRequest&) { return std::optional<WindowAnswer>(ok_answer(5)); });
  const int silent = connect_to(server.socket_path());
  const int trickling = connect_to(server.socket_path());
  ::send(trickling, "ww1 W", 5, MSG_NOSIGNAL);  // half a request, never finished
  const auto start = SteadyClock::now();
  const auto reply = parse_window_reply(ask(server.socket_path(), "ww1 W 1 2\n"));
  const auto waited = SteadyClock::now() - start;
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, WindowAnswer::Status::kOk);
  // Answered long before the silent clients' deadline: they did not hold the server up.
  EXPECT_LT(waited, 10s);
  ::close(silent);
  ::close(trickling);
}

TEST(WindowServer, ASilentClientIsDisconnectedAtItsDeadline) {
  WindowServerLimits limits;
  limits.request_timeout = 200ms;
  WindowServer server(limits);
  Serving serving(server, [](const WindowRequest&) { return std::optional<WindowAnswer>(ok_answer(5)); });
  const int silent = connect_to(server.socket_path());
  EXPECT_EQ(read_reply(silent), "");  // the server closed it: end of stream, no reply
  ::close(silent);
  serving.stop();
  EXPECT_EQ(server.counts().dropped, 1u);
}

TEST(WindowServer, ConnectionsBeyondTheLimitAreToldToRetryAndClosed) {
  WindowServerLimits limits;
  limits.max_clients = 2;
  limits.request_timeout = 20s;
  WindowServer server(limits);
  const int first = connect_to(server.socket_path());
  const int second = connect_to(server.socket_path());
  const int third = connect_to(server.socket_path());  // all three queued before the server accepts
  Serving serving(server, [](const WindowRequest&) { return std::optional<WindowAnswer>(ok_answer(5)); });
  const auto reply = parse_window_reply(read_reply(third));
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, WindowAnswer::Status::kUnavailable);
  EXPECT_NE(reply->reason.find("too many"), std::string::npos) << reply->reason;
  for (int fd : {first, second, third}) ::close(fd);
  serving.stop();
  EXPECT_EQ(server.counts().refused, 1u);
}

TEST(WindowServer, AWindowStillWaitingWhenTheJobEndsIsToldSo) {
  WindowServerLimits limits;
  limits.answer_wait = 60s;
  WindowServer server(limits);
  auto serving =
      std::make_unique<Serving>(server, [](const WindowRequest&) { return std::optional<WindowAnswer>(); });
  const int client = connect_to(server.socket_path());
  ::send(client, "ww1 W 1 2\n", 10, MSG_NOSIGNAL);
  std::this_thread::sleep_for(100ms);
  const auto start = SteadyClock::now();
  serving.reset();  // the job ended: serve() returns
  EXPECT_LT(SteadyClock::now() - start, 5s);
  const auto reply = parse_window_reply(read_reply(client));
  ::close(client);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, WindowAnswer::Status::kUnavailable);
}

TEST(WindowServer, AThrowingResolverAnswersThatRequestOnly) {
  WindowServer server;
  std::atomic<int> calls{0};
  Serving serving(server, [&](const WindowRequest&) -> std::optional<WindowAnswer> {
    if (calls++ == 0) throw std::runtime_error("snapshot failed");
    return ok_answer(3);
  });
  const auto first = parse_window_reply(ask(server.socket_path(), "ww1 W 1 2\n"));
  const auto second = parse_window_reply(ask(server.socket_path(), "ww1 W 1 2\n"));
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->status, WindowAnswer::Status::kUnavailable);
  EXPECT_EQ(first->reason, "snapshot failed");
  EXPECT_EQ(second->status, WindowAnswer::Status::kOk);
}

}  // namespace
}  // namespace wattwise::window
