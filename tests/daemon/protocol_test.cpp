#include "daemon/protocol.hpp"

#include <gtest/gtest.h>

namespace wattwise::daemon {
namespace {

TEST(DaemonProtocol, ParsesEachRequestAndFormatsItBack) {
  for (const char* line : {"wwd1 set 0 power_limit_w 300", "wwd1 set 3 sm_clock_mhz 1500",
                           "wwd1 set 1 mem_clock_mhz 1593", "wwd1 set 0 power_limit_w 287.5", "wwd1 check 1 power_limit_w 250",
                           "wwd1 check 0 sm_clock_mhz 900", "wwd1 release 2",
                           "wwd1 release all", "wwd1 allowed"}) {
    std::string why;
    const auto request = parse_request(line, &why);
    ASSERT_TRUE(request) << line << ": " << why;
    EXPECT_EQ(format_request(*request), std::string(line) + "\n");
  }
  const auto set = parse_request("wwd1 set 2 power_limit_w 287.5\r");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->kind, Request::Kind::kSet);
  EXPECT_EQ(set->gpu, 2u);
  EXPECT_EQ(set->knob, Knob::kPowerLimitW);
  EXPECT_EQ(set->value, 287.5);
  // A check is a set's words under another verb: the same fields, the same bounds.
  const auto check = parse_request("wwd1 check 2 power_limit_w 287.5");
  ASSERT_TRUE(check);
  EXPECT_EQ(check->kind, Request::Kind::kCheck);
  EXPECT_EQ((Request{check->kind, check->gpu, check->knob, check->value}),
            (Request{Request::Kind::kCheck, set->gpu, set->knob, set->value}));
}

TEST(DaemonProtocol, RefusesWhatIsNoRequestSayingWhy) {
  struct Case {
    const char* line;
    const char* why;
  };
  for (const Case& c : {Case{"ww1 set 0 power_limit_w 300", "start with 'wwd1'"},
                        Case{"wwd1", "no request"},
                        Case{"wwd1 set 0 power_limit_w", "a GPU index, a knob and a value"},
                        Case{"wwd1 set -1 power_limit_w 300", "GPU is an index"},
                        Case{"wwd1 set 0 fan_speed 300", "the knob is"},
                        Case{"wwd1 set 0 power_limit_w -300", "decimal number"},
                        Case{"wwd1 set 0 power_limit_w 1e3", "decimal number"},
                        Case{"wwd1 set 0 power_limit_w nan", "decimal number"},
                        Case{"wwd1 set 0 power_limit_w 0.5", "decimal number"},
                        Case{"wwd1 set 0 power_limit_w 100001", "decimal number"},
                        Case{"wwd1 set 0 sm_clock_mhz 1500.5", "whole number"},
                        Case{"wwd1 set  0 power_limit_w 300", "a GPU index, a knob and a value"},
                        Case{"wwd1 check 0 power_limit_w", "'check' takes a GPU index, a knob and a value"},
                        Case{"wwd1 check 0 power_limit_w 0.5", "decimal number"},
                        Case{"wwd1 check 0 sm_clock_mhz 900.5", "whole number"},
                        Case{"wwd1 check x power_limit_w 300", "GPU is an index"},
                        Case{"wwd1 release", "'release' takes"},
                        Case{"wwd1 release x", "'release' takes"},
                        Case{"wwd1 allowed please", "nothing after it"},
                        Case{"wwd1 reboot", "the requests are"}}) {
    std::string why;
    EXPECT_FALSE(parse_request(c.line, &why)) << c.line;
    EXPECT_NE(why.find(c.why), std::string::npos) << c.line << ": " << why;
  }
  std::string why;
  EXPECT_FALSE(parse_request("wwd1 allowed" + std::string(300, ' '), &why));
  EXPECT_NE(why.find("at most 256 bytes"), std::string::npos) << why;
}

TEST(DaemonProtocol, RepliesAreOnePrintableLineThatParsesBack) {
  const Reply refused{Reply::Status::kRefused, "GPU 0 is held by alice\nwwd1 ok forged"};
  const std::string line = format_reply(refused);
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;  // the newline in the text is escaped
  const auto back = parse_reply(line);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->status, Reply::Status::kRefused);
  EXPECT_EQ(back->text.find("wwd1 ok forged"), back->text.size() - 14);
  EXPECT_EQ(parse_reply("wwd1 ok\n"), (Reply{Reply::Status::kOk, ""}));
  EXPECT_EQ(parse_reply("wwd1 failed no driver"), (Reply{Reply::Status::kFailed, "no driver"}));
  EXPECT_FALSE(parse_reply("wwd1 maybe so"));
  EXPECT_FALSE(parse_reply("ww1 ok"));
  EXPECT_EQ(format_reply({Reply::Status::kOk, std::string(5000, 'x')}).size(), 1024 + 9);  // cut at 1 KiB
}

}  // namespace
}  // namespace wattwise::daemon
