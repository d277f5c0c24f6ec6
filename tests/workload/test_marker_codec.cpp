#include "workload/marker_codec.hpp"

#include <gtest/gtest.h>

#include "core/text.hpp"

namespace wattwise::workload {
namespace {

Marker sample_marker() {
  Marker marker;
  marker.t = Nanos{123456789012};
  marker.kind = MarkerKind::kBegin;
  marker.name = "epoch";
  marker.pid = 42;
  marker.rank = 0;
  marker.counters = {{"samples", 128}};
  return marker;
}

TEST(MarkerCodec, EncodesTheDocumentedExample) {
  EXPECT_EQ(encode_marker(sample_marker()), "ww1 B 123456789012 epoch pid=42 rank=0 samples=128");
}

TEST(MarkerCodec, RoundTripKeepsEveryField) {
  Marker marker = sample_marker();
  marker.kind = MarkerKind::kEnd;
  marker.name = "save model=best 100%\ttab";
  marker.counters = {{"flops", 4.1e12}, {"loss", 0.1}, {"odd key", -3.5}};
  auto decoded = decode_marker(encode_marker(marker));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->t, marker.t);
  EXPECT_EQ(decoded->kind, marker.kind);
  EXPECT_EQ(decoded->name, marker.name);
  EXPECT_EQ(decoded->pid, 42);
  EXPECT_EQ(decoded->rank, 0);
  EXPECT_EQ(decoded->counters, marker.counters);
}

TEST(MarkerCodec, EncodedNameHasNoSpaceOrEquals) {
  Marker marker = sample_marker();
  marker.name = "a b=c%";
  EXPECT_EQ(encode_marker(marker).substr(0, 27), "ww1 B 123456789012 a%20b%3D");
}

TEST(MarkerCodec, WithoutRankTheRankIsAbsent) {
  auto decoded = decode_marker("ww1 P 5 checkpoint pid=7");
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->kind, MarkerKind::kPoint);
  EXPECT_FALSE(decoded->rank.has_value());
  EXPECT_TRUE(decoded->counters.empty());
}

TEST(MarkerCodec, TrailingNewlineIsTolerated) {
  EXPECT_TRUE(decode_marker("ww1 E 5 epoch pid=7\n"));
}

TEST(MarkerCodec, Utf8NameSurvives) {
  auto decoded = decode_marker("ww1 P 5 \xc3\xa9poque pid=7");
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->name, "\xc3\xa9poque");
}

struct MalformedCase {
  const char* message;
  const char* reason_part;
};

class MalformedMarker : public testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedMarker, IsRejectedWithAReason) {
  std::string reason;
  EXPECT_FALSE(decode_marker(GetParam().message, &reason));
  EXPECT_NE(reason.find(GetParam().reason_part), std::string::npos) << reason;
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, MalformedMarker,
    testing::Values(MalformedCase{"", "fewer than 4"}, MalformedCase{"ww1 B 5", "fewer than 4"},
                    MalformedCase{"ww2 B 5 epoch", "version"}, MalformedCase{"ww1 X 5 epoch", "kind"},
                    MalformedCase{"ww1 B -5 epoch", "timestamp"},
                    MalformedCase{"ww1 B 5x epoch", "timestamp"}, MalformedCase{"ww1 B 5 %zz", "name"},
                    MalformedCase{"ww1 B 5 abc%2", "name"},
                    MalformedCase{"ww1 B 5 epoch samples", "key=number"},
                    MalformedCase{"ww1 B 5 epoch samples=lots", "key=number"},
                    MalformedCase{"ww1 B 5 epoch samples=inf", "key=number"},
                    MalformedCase{"ww1 B 5 epoch =3", "key=number"},
                    MalformedCase{"ww1 B 5 epoch pid=x", "pid"},
                    MalformedCase{"ww1 B 5 epoch rank=1.5", "rank"}, MalformedCase{"ww1  B 5 epoch", "kind"},
                    MalformedCase{"ww1 B 4611686018427387905 epoch", "timestamp"},
                    MalformedCase{"ww1 B 99999999999999999999 epoch", "timestamp"}));

TEST(MarkerCodec, DroppedCountIsReservedAndRoundTrips) {
  Marker marker = sample_marker();
  marker.dropped_before = 12;
  const auto decoded = decode_marker(encode_marker(marker));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->dropped_before, 12);
  EXPECT_TRUE(decoded->counters.find("ww_dropped") == decoded->counters.end());
  EXPECT_FALSE(decode_marker("ww1 P 5 x pid=1 ww_dropped=-1"));
}

// Issue 10, item 10: an invalid UTF-8 name reached nlohmann::json::dump, which threw, and the job's result
// was lost as an "internal error".
TEST(MarkerCodec, InvalidUtf8InNamesAndKeysIsRepairedWhereItEnters) {
  auto marker = decode_marker("ww1 B 5 ep\xFFoch%C3 pid=1 k%E9y=2");
  ASSERT_TRUE(marker);
  EXPECT_EQ(marker->name, "ep\xEF\xBF\xBDoch\xEF\xBF\xBD");
  ASSERT_EQ(marker->counters.size(), 1u);
  EXPECT_EQ(marker->counters.begin()->first, "k\xEF\xBF\xBDy");
  auto valid = decode_marker("ww1 P 5 Gr%C3%B6%C3%9Fe pid=1");
  ASSERT_TRUE(valid);
  EXPECT_EQ(valid->name, "Größe");
}

TEST(MarkerCodec, AnyBytesDecodeWithoutThrowingAndGiveValidText) {
  std::string bytes = "ww1 B 5 ";
  for (int c = 0; c < 256; ++c) bytes += static_cast<char>(c);
  for (std::size_t cut = 0; cut <= bytes.size(); cut += 7) {
    std::optional<Marker> marker;
    EXPECT_NO_THROW(marker = decode_marker(std::string_view(bytes).substr(0, cut)));
    if (marker) {
      EXPECT_TRUE(is_valid_utf8(marker->name));
    }
  }
}

TEST(PercentEncoding, DecodeUndoesEncode) {
  std::string all_bytes;
  for (int c = 1; c < 256; ++c) all_bytes += static_cast<char>(c);
  EXPECT_EQ(percent_decode(percent_encode(all_bytes)), all_bytes);
}

}  // namespace
}  // namespace wattwise::workload
