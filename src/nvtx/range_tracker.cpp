#include "nvtx/range_tracker.hpp"

#include <cstring>

namespace wattwise::nvtx {

using namespace nvtx_abi;

namespace {

// Tells trackers apart in the per-thread stacks (tests make several in one process; the library one).
std::atomic<std::uint64_t> g_next_generation{1};

// Each thread's open pushed ranges, per tracker generation and per domain (null: the default domain).
// thread_local, because NVTX push/pop ranges belong to the thread that pushed them: a pop on another
// thread must not close them, and a thread that ends takes its never-popped ranges with it.
using DomainStacks = std::unordered_map<const void*, std::vector<std::string>>;
thread_local std::unordered_map<std::uint64_t, DomainStacks> t_stacks;

void append_utf8(std::string& out, char32_t c) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace

bool DomainFilter::includes(std::string_view domain_name) const {
  if (all) return true;
  for (const auto& name : names)
    if (name == domain_name) return true;
  return false;
}

DomainFilter parse_domain_filter(const char* text) {
  DomainFilter filter;
  if (text == nullptr) return filter;
  std::string_view rest(text);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (item == "all")
      filter.all = true;
    else if (!item.empty() && item != "default")
      filter.names.emplace_back(item);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return filter;
}

std::string utf8_from_wide(const wchar_t* text) {
  std::string out;
  if (text == nullptr) return out;
  for (; *text != L'\0'; ++text) append_utf8(out, static_cast<char32_t>(*text));
  return out;
}

std::string cut_utf8(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to the start of the sequence that did not fit.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text;
}

RangeTracker::RangeTracker(MarkerSink& sink, DomainFilter filter)
    : sink_(sink), filter_(std::move(filter)), generation_(g_next_generation++) {}

nvtxDomainHandle_t RangeTracker::create_domain(std::string name) {
  std::lock_guard lock(mutex_);
  // One handle per name: a library that creates its domain in two places pushes and pops on one stack.
  for (Domain& domain : domains_)
    if (domain.name == name) return reinterpret_cast<nvtxDomainHandle_t>(&domain);
  const bool wanted = filter_.includes(name);
  domains_.push_back(Domain{std::move(name), wanted});
  return reinterpret_cast<nvtxDomainHandle_t>(&domains_.back());
}

nvtxStringHandle_t RangeTracker::register_string(std::string text) {
  std::lock_guard lock(mutex_);
  strings_.push_back(std::move(text));
  return reinterpret_cast<nvtxStringHandle_t>(&strings_.back());
}

bool RangeTracker::included(nvtxDomainHandle_t domain) const {
  // A record is written once, before its handle is returned, and never moves: no lock needed to read it.
  return domain == nullptr || reinterpret_cast<const Domain*>(domain)->included;
}

std::string RangeTracker::text_name(nvtxDomainHandle_t domain, std::string_view message) const {
  std::string name = message.empty() ? std::string(kUnnamed) : std::string(message);
  if (domain != nullptr) name = reinterpret_cast<const Domain*>(domain)->name + ":" + name;
  return cut_utf8(std::move(name), kMaxNameBytes);
}

std::string RangeTracker::event_name(nvtxDomainHandle_t domain,
                                     const nvtxEventAttributes_t* attributes) const {
  // Fields past `size` were not given by the caller (an older, shorter struct): read none of them.
  constexpr std::size_t kMessageEnd = offsetof(nvtxEventAttributes_t, message) + sizeof(nvtxMessageValue_t);
  if (attributes == nullptr || attributes->size < kMessageEnd) return text_name(domain, {});
  const nvtxMessageValue_t& message = attributes->message;
  switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return text_name(domain,
                       message.ascii == nullptr ? std::string_view() : std::string_view(message.ascii));
    case NVTX_MESSAGE_TYPE_UNICODE:
      return text_name(domain, utf8_from_wide(message.unicode));
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return text_name(domain,
                       message.registered == nullptr
                           ? std::string_view()
                           : std::string_view(*reinterpret_cast<const std::string*>(message.registered)));
    default:
      return text_name(domain, {});
  }
}

std::vector<std::string>& RangeTracker::thread_stack(nvtxDomainHandle_t domain) {
  return t_stacks[generation_][domain];
}

int RangeTracker::push(nvtxDomainHandle_t domain, const std::string& name) {
  auto& stack = thread_stack(domain);
  stack.push_back(name);
  if (included(domain)) sink_.begin(name);
  return static_cast<int>(stack.size()) - 1;
}

int RangeTracker::pop(nvtxDomainHandle_t domain) {
  auto& stack = thread_stack(domain);
  if (stack.empty()) {
    if (included(domain)) ++pops_without_push_;
    return -1;
  }
  if (included(domain)) sink_.end(stack.back());
  stack.pop_back();
  return static_cast<int>(stack.size());
}

nvtxRangeId_t RangeTracker::start(nvtxDomainHandle_t domain, const std::string& name) {
  const nvtxRangeId_t id = next_id_++;
  if (!included(domain)) return id;
  {
    std::lock_guard lock(mutex_);
    started_.emplace(id, name);
  }
  sink_.begin(name);
  return id;
}

void RangeTracker::end(nvtxDomainHandle_t domain, nvtxRangeId_t id) {
  if (!included(domain)) return;
  std::string name;
  {
    std::lock_guard lock(mutex_);
    const auto found = started_.find(id);
    if (found == started_.end()) {
      ++ends_of_unknown_id_;
      return;
    }
    name = std::move(found->second);
    started_.erase(found);
  }
  sink_.end(name);
}

void RangeTracker::mark(nvtxDomainHandle_t domain, const std::string& name) {
  if (included(domain)) sink_.point(name);
}

TrackerAnomalies RangeTracker::anomalies() const {
  return TrackerAnomalies{pops_without_push_.load(), ends_of_unknown_id_.load()};
}

}  // namespace wattwise::nvtx
