#include "core/text.hpp"

#include "core/json_text.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace wattwise {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(ValidUtf8, KeepsValidTextUnchanged) {
  for (const std::string text : {"", "epoch", "Größe", "日本語", "\xF0\x9F\x94\xA5 fire", "±3 %"}) {
    EXPECT_TRUE(is_valid_utf8(text)) << text;
    EXPECT_EQ(valid_utf8(text), text);
  }
}

TEST(ValidUtf8, ReplacesEachMaximalInvalidSubsequenceWithOneReplacementCharacter) {
  EXPECT_EQ(valid_utf8("a\xFF"
                       "b"),
            "a" + kFffd + "b");
  EXPECT_EQ(valid_utf8("\xC3"), kFffd);  // truncated at the end
  EXPECT_EQ(valid_utf8("\xE6\x97"
                       "x"),
            kFffd + "x");                                                    // truncated 3-byte: one U+FFFD
  EXPECT_EQ(valid_utf8("\xC0\xAF"), kFffd + kFffd);                          // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);              // a surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // above U+10FFFF
  EXPECT_EQ(valid_utf8("\x80\x80"), kFffd + kFffd);                          // stray continuation bytes
  EXPECT_FALSE(is_valid_utf8("\xC3"));
  std::string in_place = "ok\xFE";
  make_valid_utf8(in_place);
  EXPECT_EQ(in_place, "ok" + kFffd);
}

TEST(ValidUtf8, EveryByteStringBecomesTextThatJsonCanDump) {
  // nlohmann::json::dump throws on invalid UTF-8 (the "internal error" of issue 10); repaired text never
  // does.
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes += static_cast<char>(b);
  for (std::size_t start = 0; start < all_bytes.size(); ++start) {
    const std::string repaired = valid_utf8(all_bytes.substr(start) + all_bytes.substr(0, start));
    EXPECT_TRUE(is_valid_utf8(repaired));
    EXPECT_NO_THROW((void)nlohmann::json(repaired).dump());
  }
}

TEST(ForTerminal, EscapesControlSequencesAndBidiOverrides) {
  EXPECT_EQ(for_terminal("epoch"), "epoch");
  EXPECT_EQ(for_terminal("Größe"), "Größe");
  EXPECT_EQ(for_terminal("\x1b[2J\x1b]0;pwned\x07"), "\\e[2J\\e]0;pwned\\x07");
  EXPECT_EQ(for_terminal("a\rb\nc\td\x7f"), "a\\x0db\\x0ac\\x09d\\x7f");
  EXPECT_EQ(for_terminal("\xC2\x9B"
                         "31m"),
            "\\u009b31m");                                             // C1 CSI
  EXPECT_EQ(for_terminal("x\xE2\x80\xAEgnp.exe"), "x\\u202egnp.exe");  // right-to-left override
  EXPECT_EQ(for_terminal("bad\xFF"), "bad" + kFffd);
}

TEST(JsonText, ReplacesInvalidBytesInsteadOfThrowing) {
  const nlohmann::json value = {{"name", std::string("bad\xFF")}};
  EXPECT_THROW((void)value.dump(), nlohmann::json::type_error);
  EXPECT_EQ(json_text(value), "{\"name\":\"bad" + kFffd + "\"}");
}

}  // namespace
}  // namespace wattwise
