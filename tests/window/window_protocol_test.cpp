#include "window/window_protocol.hpp"

#include <gtest/gtest.h>

namespace wattwise::window {
namespace {

TEST(WindowProtocol, ARequestRoundTripsWithAndWithoutRank) {
  const WindowRequest with_rank{Nanos{1000}, Nanos{2500}, 3};
  const auto parsed = parse_window_request(format_window_request(with_rank));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->begin, Nanos{1000});
  EXPECT_EQ(parsed->end, Nanos{2500});
  EXPECT_EQ(parsed->rank, 3);
  const auto without = parse_window_request("ww1 W 5 6");
  ASSERT_TRUE(without);
  EXPECT_FALSE(without->rank);
}

TEST(WindowProtocol, MalformedRequestsAreRefusedWithAReason) {
  for (const char* line :
       {"", "ww1", "ww2 W 1 2", "ww1 X 1 2", "ww1 W a 2", "ww1 W 1 2 rank=-1", "ww1 W 1 2 x=1", "ww1 W -1 2",
        "ww1 W 9 2", "ww1 W 1 99999999999999999999", "ww1 W 1 2 rank=1 more", "ww1 W  1 2"}) {
    std::string why;
    EXPECT_FALSE(parse_window_request(line, &why)) << line;
    EXPECT_FALSE(why.empty()) << line;
  }
}

TEST(WindowProtocol, AnOkReplyRoundTripsEnergyPerGpuAndMethod) {
  WindowAnswer answer;
  answer.status = WindowAnswer::Status::kOk;
  answer.energy_j = 412.5;
  answer.duration_s = 1.25;
  answer.method = "samples";
  answer.gpus = {{0, 206.125}, {3, 206.375}};
  const std::string line = format_window_reply(answer);
  EXPECT_EQ(line, "ww1 ok energy_j=412.5 duration_s=1.25 method=samples gpus=0:206.125,3:206.375\n");
  const auto parsed = parse_window_reply(line);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->status, WindowAnswer::Status::kOk);
  EXPECT_DOUBLE_EQ(parsed->energy_j, 412.5);
  ASSERT_EQ(parsed->gpus.size(), 2u);
  EXPECT_EQ(parsed->gpus[1].gpu_index, 3u);
  EXPECT_DOUBLE_EQ(parsed->gpus[1].energy_j, 206.375);
}

TEST(WindowProtocol, AReasonIsKeptOnOneLine) {
  const std::string line = format_window_reply(WindowAnswer::unavailable("two\nlines\r"));
  EXPECT_EQ(line, "ww1 unavailable two lines \n");
  const auto parsed = parse_window_reply(line);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->status, WindowAnswer::Status::kUnavailable);
  EXPECT_EQ(parsed->reason, "two lines ");
}

}  // namespace
}  // namespace wattwise::window
