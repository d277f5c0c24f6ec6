#include "tune/live_iterations.hpp"

#include <algorithm>
#include <utility>

namespace wattwise::tune {
namespace {

// Ranks and processes share one key space: ranks are small non-negative numbers, processes are stored
// negative so that a rank-less process never collides with a rank.
long long rank_key(const workload::Marker& marker) {
  if (marker.rank) return *marker.rank;
  return -1 - static_cast<long long>(marker.pid);
}

}  // namespace

IterationAssembler::IterationAssembler(std::string name) : name_(std::move(name)) {}

std::vector<LiveIteration> IterationAssembler::add(const std::vector<workload::Marker>& markers) {
  std::vector<LiveIteration> complete;
  for (const auto& marker : markers) {
    add_one(marker);
    while (auto iteration = next_complete()) complete.push_back(*iteration);
  }
  return complete;
}

void IterationAssembler::add_one(const workload::Marker& marker) {
  if (marker.name != name_ || marker.kind == workload::MarkerKind::kPoint) return;
  heard_any_ = true;
  const long long key = rank_key(marker);
  auto [it, inserted] = ranks_.try_emplace(key);
  Rank& rank = it->second;
  if (inserted) {
    rank.next_number = next_emit_;
    rank.aligning = next_emit_ > 0;
  }
  if (marker.kind == workload::MarkerKind::kBegin) {
    if (rank.depth++ == 0) rank.open_begin = marker.t;
    return;
  }
  if (rank.depth == 0) return;  // an end without its begin (the begin was dropped): no duration to take
  if (--rank.depth > 0) return;
  if (marker.t < rank.open_begin) return;  // a clock that went backwards cannot give a duration
  if (rank.aligning) {
    // Half of it or more before the latest emitted iteration's end: it ran during an iteration its peers
    // have already completed without it.
    if (rank.open_begin + (marker.t - rank.open_begin) / 2 < last_emitted_end_) return;
    rank.aligning = false;
  }
  rank.completed[rank.next_number++] = {rank.open_begin, marker.t};
}

std::optional<LiveIteration> IterationAssembler::next_complete() {
  if (ranks_.empty()) return std::nullopt;
  LiveIteration iteration;
  iteration.number = next_emit_;
  bool first = true;
  for (const auto& [key, rank] : ranks_) {
    const auto found = rank.completed.find(next_emit_);
    if (found == rank.completed.end()) return std::nullopt;
    const auto [begin, end] = found->second;
    iteration.begin = first ? begin : std::min(iteration.begin, begin);
    iteration.end = first ? end : std::max(iteration.end, end);
    iteration.time_s = std::max(iteration.time_s, to_seconds(end - begin));
    first = false;
  }
  for (auto& [key, rank] : ranks_) rank.completed.erase(next_emit_);
  iteration.ranks = ranks_.size();
  if (next_emit_ > 0) iteration.begin = std::clamp(last_emitted_end_, iteration.begin, iteration.end);
  last_emitted_end_ = iteration.end;
  ++next_emit_;
  return iteration;
}

}  // namespace wattwise::tune
