#include "nvtx/range_tracker.hpp"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <thread>

namespace wattwise::nvtx {
namespace {

using namespace nvtx_abi;

// Records what the tracker sends, as "B name", "E name", "P name".
class RecordingSink : public MarkerSink {
 public:
  void begin(const std::string& name) override { add("B " + name); }
  void end(const std::string& name) override { add("E " + name); }
  void point(const std::string& name) override { add("P " + name); }
  std::vector<std::string> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }

 private:
  void add(std::string event) {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
  }
  mutable std::mutex mutex_;
  std::vector<std::string> events_;
};

nvtxEventAttributes_t attributes(int32_t type, nvtxMessageValue_t message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = sizeof(nvtxEventAttributes_t);
  a.messageType = type;
  a.message = message;
  return a;
}

TEST(RangeTracker, PopEndsTheInnermostPushedRangeByName) {
  RecordingSink sink;
  RangeTracker tracker(sink, {});
  EXPECT_EQ(tracker.push(nullptr, "epoch"), 0);
  EXPECT_EQ(tracker.push(nullptr, "step"), 1);
  EXPECT_EQ(tracker.pop(nullptr), 1);
  EXPECT_EQ(tracker.pop(nullptr), 0);
  EXPECT_EQ(sink.events(), (std::vector<std::string>{"B epoch", "B step", "E step", "E epoch"}));
}

TEST(RangeTracker, SameNameNestingSendsEachLevel) {
  // wattwise pairs an end with the innermost begin of that name and counts nested occurrences once.
  RecordingSink sink;
  RangeTracker tracker(sink, {});
  tracker.push(nullptr, "step");
  tracker.push(nullptr, "step");
  tracker.pop(nullptr);
  tracker.pop(nullptr);
  EXPECT_EQ(sink.events(), (std::vector<std::string>{"B step", "B step", "E step", "E step"}));
}

TEST(RangeTracker, PopOnAnotherThreadDoesNotCloseThisThreadsRange) {
  RecordingSink sink;
  RangeTracker tracker(sink, {});
  tracker.push(nullptr, "epoch");
  int level = 0;
  std::thread([&] { level = tracker.pop(nullptr); }).join();
  EXPECT_EQ(level, -1);
  EXPECT_EQ(tracker.anomalies().pops_without_push, 1u);
  EXPECT_EQ(tracker.pop(nullptr), 0);
  EXPECT_EQ(sink.events(), (std::vector<std::string>{"B epoch", "E epoch"}));
}

TEST(RangeTracker, ThreadsNestTheirOwnRanges) {
  RecordingSink sink;
  RangeTracker tracker(sink, {});
  tracker.push(nullptr, "main");
  std::thread([&] {
    EXPECT_EQ(tracker.push(nullptr, "worker"), 0);  // level 0: its own thread's first range
    tracker.pop(nullptr);
  }).join();
  tracker.pop(nullptr);
  EXPECT_EQ(sink.events(), (std::vector<std::string>{"B main", "B worker", "E worker", "E main"}));
}

TEST(RangeTracker, ConcurrentThreadsPairEveryRangeTheyOpen) {
  // Run under ./dev.sh sanitize thread: pushes, pops, starts and ends from several threads at once.
  RecordingSink sink;
  RangeTracker tracker(sink, {});
  constexpr int kThreads = 4, kRanges = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&tracker, t] {
      const std::string name = std::to_string(t) + "-thread";
      for (int i = 0; i < kRanges; ++i) {
        EXPECT_EQ(tracker.push(nullptr, name), 0);
        const nvtxRangeId_t id = tracker.start(nullptr, "shared");
        tracker.end(nullptr, id);
        EXPECT_EQ(tracker.pop(nullptr), 0);
      }
    });
  for (auto& thread : threads) thread.join();
  std::map<std::string, int> open;
  for (const auto& event : sink.events()) open[event.substr(2)] += event[0] == 'B' ? 1 : -1;
  EXPECT_EQ(open.size(), kThreads + 1u);
  for (const auto& [name, count] : open) EXPECT_EQ(count, 0) << name;
  EXPECT_EQ(sink.events().size(), 4u * kThreads * kRanges);
  EXPECT_EQ(tracker.anomalies().pops_without_push + tracker.anomalies().ends_of_unknown_id, 0u);
}

TEST(RangeTracker, StartedRangeMayEndOnAnotherThread) {
  RecordingSink sink;
  RangeTracker tracker(sink, {});
  const nvtxRangeId_t a = tracker.start(nullptr, "load");
  const nvtxRangeId_t b = tracker.start(nullptr, "save");
  EXPECT_NE(a, b);
  std::thread([&] { tracker.end(nullptr, a); }).join();
  tracker.end(nullptr, b);
  EXPECT_EQ(sink.events(), (std::vector<std::string>{"B load", "B save", "E load", "E save"}));
}

TEST(RangeTracker, EndOfAnUnknownOrEndedIdIsCountedNotSent) {
  RecordingSink sink;
  RangeTracker tracker(sink, {});
  const nvtxRangeId_t id = tracker.start(nullptr, "load");
  tracker.end(nullptr, id);
  tracker.end(nullptr, id);
  tracker.end(nullptr, 987654);
  EXPECT_EQ(tracker.anomalies().ends_of_unknown_id, 2u);
  EXPECT_EQ(sink.events().size(), 2u);
}

TEST(RangeTracker, MarkIsAPoint) {
  RecordingSink sink;
  RangeTracker tracker(sink, {});
  tracker.mark(nullptr, "checkpoint");
  EXPECT_EQ(sink.events(), (std::vector<std::string>{"P checkpoint"}));
}

TEST(RangeTracker, NamedDomainsAreLeftOutUnlessListed) {
  RecordingSink sink;
  RangeTracker tracker(sink, parse_domain_filter("NCCL"));
  const auto nccl = tracker.create_domain("NCCL");
  const auto other = tracker.create_domain("cuDNN");
  ASSERT_NE(nccl, nullptr);  // a named domain's handle must never read as the default domain
  tracker.push(other, tracker.text_name(other, "conv"));
  tracker.push(nccl, tracker.text_name(nccl, "AllReduce"));
  EXPECT_EQ(tracker.pop(nccl), 0);
  EXPECT_EQ(tracker.pop(other), 0);  // still nested correctly, only not sent
  EXPECT_EQ(sink.events(), (std::vector<std::string>{"B NCCL:AllReduce", "E NCCL:AllReduce"}));
}

TEST(RangeTracker, ADomainCreatedTwiceIsOneDomain) {
  RecordingSink sink;
  RangeTracker tracker(sink, parse_domain_filter("lib"));
  const auto first = tracker.create_domain("lib");
  const auto second = tracker.create_domain("lib");
  EXPECT_EQ(first, second);
  EXPECT_NE(tracker.create_domain("other"), first);
  tracker.push(first, tracker.text_name(first, "op"));
  EXPECT_EQ(tracker.pop(second), 0);
  EXPECT_EQ(sink.events(), (std::vector<std::string>{"B lib:op", "E lib:op"}));
}

TEST(RangeTracker, AllDomainsWhenAskedAndDefaultOnlyByDefault) {
  EXPECT_TRUE(parse_domain_filter("all").includes("anything"));
  EXPECT_FALSE(parse_domain_filter(nullptr).includes("NCCL"));
  EXPECT_FALSE(parse_domain_filter("").includes("NCCL"));
  const auto filter = parse_domain_filter("default,NCCL,,x");
  EXPECT_EQ(filter.names, (std::vector<std::string>{"NCCL", "x"}));
}

TEST(RangeTracker, PushAndPopPerDomainAreSeparateStacks) {
  RecordingSink sink;
  RangeTracker tracker(sink, parse_domain_filter("all"));
  const auto d = tracker.create_domain("lib");
  tracker.push(nullptr, "epoch");
  tracker.push(d, tracker.text_name(d, "op"));
  EXPECT_EQ(tracker.pop(nullptr), 0);  // the default domain's pop closes epoch, not lib:op
  EXPECT_EQ(tracker.pop(d), 0);
  EXPECT_EQ(sink.events(), (std::vector<std::string>{"B epoch", "B lib:op", "E epoch", "E lib:op"}));
}

TEST(RangeTracker, EventNamesFromAsciiWideAndRegisteredMessages) {
  RecordingSink sink;
  RangeTracker tracker(sink, {});
  nvtxMessageValue_t m{};
  m.ascii = "forward";
  auto a = attributes(NVTX_MESSAGE_TYPE_ASCII, m);
  EXPECT_EQ(tracker.event_name(nullptr, &a), "forward");
  m.unicode = L"\u00e9poque \u2713 \U0001F600";
  a = attributes(NVTX_MESSAGE_TYPE_UNICODE, m);
  EXPECT_EQ(tracker.event_name(nullptr, &a), "\xc3\xa9poque \xe2\x9c\x93 \xf0\x9f\x98\x80");
  m.registered = tracker.register_string("backward");
  a = attributes(NVTX_MESSAGE_TYPE_REGISTERED, m);
  EXPECT_EQ(tracker.event_name(nullptr, &a), "backward");
}

TEST(RangeTracker, EventWithoutMessageIsUnnamed) {
  RecordingSink sink;
  RangeTracker tracker(sink, {});
  nvtxMessageValue_t m{};
  m.ascii = "never read";
  auto a = attributes(NVTX_MESSAGE_UNKNOWN, m);
  EXPECT_EQ(tracker.event_name(nullptr, &a), kUnnamed);
  EXPECT_EQ(tracker.event_name(nullptr, nullptr), kUnnamed);
  EXPECT_EQ(tracker.text_name(nullptr, ""), kUnnamed);
  a = attributes(NVTX_MESSAGE_TYPE_ASCII, m);
  a.size = 32;  // an older caller's shorter struct: the message lies beyond it
  EXPECT_EQ(tracker.event_name(nullptr, &a), kUnnamed);
}

TEST(RangeTracker, WideTextThatIsNoUnicodeBecomesReplacementCharacter) {
  const wchar_t text[] = {L'a', static_cast<wchar_t>(0xD800), static_cast<wchar_t>(0x110000), L'b', 0};
  EXPECT_EQ(utf8_from_wide(text),
            "a\xef\xbf\xbd\xef\xbf\xbd"
            "b");
}

TEST(RangeTracker, LongNamesAreCutAtACharacterBoundary) {
  RecordingSink sink;
  RangeTracker tracker(sink, {});
  std::string long_name = "a";
  while (long_name.size() < 2 * kMaxNameBytes) long_name += "\xc3\xa9";  // é, two bytes, from an odd offset
  const std::string name = tracker.text_name(nullptr, long_name);
  EXPECT_LE(name.size(), kMaxNameBytes);
  EXPECT_GE(name.size(), kMaxNameBytes - 1);
  EXPECT_EQ(static_cast<unsigned char>(name.back()), 0xa9);  // ends on a whole é
  EXPECT_EQ(cut_utf8("abc", 10), "abc");
}

}  // namespace
}  // namespace wattwise::nvtx
