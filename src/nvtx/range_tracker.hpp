#pragma once

// NVTX ranges as wattwise phases: what the injection library (injection.cpp) does with each NVTX call, apart
// from the C ABI so that tests reach it without a loader. A pushed or started range becomes a phase begin
// named by the range's message, its pop or end the phase's end; an NVTX mark becomes a point.
//
// NVTX's rules, kept: push/pop ranges nest per thread and per domain (a pop closes the innermost range its
// own thread pushed in that domain); start/end ranges are identified by the id start returns and may end on
// any thread. Markers carry no thread, so wattwise pairs a pop's end with the innermost open begin of the
// same name in the process (docs/markers.md): what it pairs is the range's name, which the tracker keeps.

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nvtx/nvtx_abi.hpp"

namespace wattwise::nvtx {

// Where the phases go: the C marker client in a job, a recorder in tests. Called from the job's threads.
class MarkerSink {
 public:
  virtual ~MarkerSink() = default;
  virtual void begin(const std::string& name) = 0;
  virtual void end(const std::string& name) = 0;
  virtual void point(const std::string& name) = 0;
};

// Which NVTX domains become phases. The default domain (the one nvtxRangePushA and PyTorch's
// torch.cuda.nvtx use) always does; named domains (libraries such as NCCL create their own, with a range
// per collective call) only when listed, or all with "all". Parsed from WATTWISE_NVTX_DOMAINS: a comma
// separated list of domain names, "all", or empty for the default domain only.
struct DomainFilter {
  bool all = false;
  std::vector<std::string> names;
  bool includes(std::string_view domain_name) const;
};
DomainFilter parse_domain_filter(const char* text);

// What could not become a phase, for the one line the library prints when the process exits.
struct TrackerAnomalies {
  std::uint64_t pops_without_push = 0;   // a pop on a thread (and domain) with no open pushed range
  std::uint64_t ends_of_unknown_id = 0;  // an end whose id no start returned (or that was ended already)
};

inline constexpr std::size_t kMaxNameBytes = 1024;  // longer messages are cut (at a UTF-8 boundary)
inline constexpr const char* kUnnamed = "unnamed";  // a range without a message

class RangeTracker {
 public:
  RangeTracker(MarkerSink& sink, DomainFilter filter);
  RangeTracker(const RangeTracker&) = delete;
  RangeTracker& operator=(const RangeTracker&) = delete;

  // Handles are pointers to records the tracker keeps for its whole life (NVTX handles are never reused).
  nvtx_abi::nvtxDomainHandle_t create_domain(std::string name);
  nvtx_abi::nvtxStringHandle_t register_string(std::string text);

  // The phase name of an event: its message (UTF-8), "DOMAIN:message" in a named domain, cut to
  // kMaxNameBytes; kUnnamed for no message.
  std::string event_name(nvtx_abi::nvtxDomainHandle_t domain,
                         const nvtx_abi::nvtxEventAttributes_t* attributes) const;
  std::string text_name(nvtx_abi::nvtxDomainHandle_t domain, std::string_view message) const;

  // The NVTX calls; `domain` is null for the default domain. push returns the 0-based level of the new
  // range, pop the level of the range it closed or -1 when none was open, as NVTX documents.
  int push(nvtx_abi::nvtxDomainHandle_t domain, const std::string& name);
  int pop(nvtx_abi::nvtxDomainHandle_t domain);
  nvtx_abi::nvtxRangeId_t start(nvtx_abi::nvtxDomainHandle_t domain, const std::string& name);
  void end(nvtx_abi::nvtxDomainHandle_t domain, nvtx_abi::nvtxRangeId_t id);
  void mark(nvtx_abi::nvtxDomainHandle_t domain, const std::string& name);

  TrackerAnomalies anomalies() const;

 private:
  struct Domain {
    std::string name;
    bool included = false;
  };
  bool included(nvtx_abi::nvtxDomainHandle_t domain) const;
  std::vector<std::string>& thread_stack(nvtx_abi::nvtxDomainHandle_t domain);

  MarkerSink& sink_;
  const DomainFilter filter_;
  const std::uint64_t generation_;  // tells this tracker's per-thread stacks from an earlier one's
  mutable std::mutex mutex_;        // guards the records and the open start/end ranges
  std::deque<Domain> domains_;      // deque: records never move, their addresses are the handles
  std::deque<std::string> strings_;
  std::unordered_map<nvtx_abi::nvtxRangeId_t, std::string> started_;
  std::atomic<nvtx_abi::nvtxRangeId_t> next_id_{1};
  std::atomic<std::uint64_t> pops_without_push_{0};
  std::atomic<std::uint64_t> ends_of_unknown_id_{0};
};

// UTF-32 (Linux's wchar_t) as UTF-8; a value that is no Unicode scalar becomes U+FFFD.
std::string utf8_from_wide(const wchar_t* text);
// At most max_bytes, never ending inside a UTF-8 sequence.
std::string cut_utf8(std::string text, std::size_t max_bytes);

}  // namespace wattwise::nvtx
