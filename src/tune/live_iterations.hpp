#pragma once

// The job's iterations as its markers arrive: each rank's `iteration` begin/end pairs, matched up and
// joined across the ranks of a data-parallel job (docs/tune.md "Data-parallel jobs").

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "workload/marker.hpp"

namespace wattwise::tune {

// One iteration of the whole job: iteration `number` of every rank.
struct LiveIteration {
  std::uint64_t number = 0;  // 0-based, in the job's order
  // The stretch whose energy is the iteration's: from the earliest rank's begin, or from the previous
  // iteration's end when that is later, to the latest rank's end. Consecutive iterations never overlap, so
  // their energies add up to the job's: ranks out of step by part of an iteration (markers placed where the
  // Python loop queues work) would otherwise count the overlap twice (on 4 H200s, 2.0x the GPUs' energy).
  Nanos begin{0};
  Nanos end{0};
  double time_s = 0;         // the slowest rank's own duration: the pace of a synchronous job
  std::size_t ranks = 0;     // how many ranks it joins
};

// Matches each rank's begin/end markers of one name into iterations and emits iteration k once every rank
// heard so far has ended its k-th. A rank is the marker's rank when it says, else its process. A rank
// heard for the first time joins at the next iteration to emit (a rank that starts late is not waited for
// over iterations it never ran); those of its iterations that ran during iterations already emitted (its
// markers came later than its peers') are dropped, so that its numbers line up with its peers' in time: one
// off, every joined iteration would span two and count their energy twice. Nested markers of the same name
// count once (the outermost).
class IterationAssembler {
 public:
  explicit IterationAssembler(std::string name = "iteration");

  // Feeds markers in arrival order; returns the iterations now complete on every rank, in order.
  std::vector<LiveIteration> add(const std::vector<workload::Marker>& markers);
  // Whether any marker of the name has been heard.
  bool heard_any() const { return heard_any_; }

 private:
  struct Rank {
    std::uint64_t next_number = 0;  // the number its next completed iteration gets
    int depth = 0;                  // open begins of the name
    Nanos open_begin{0};
    bool aligning = false;  // joined after an iteration was emitted: not yet lined up with its peers
    std::map<std::uint64_t, std::pair<Nanos, Nanos>> completed;  // number -> (begin, end), not yet emitted
  };
  void add_one(const workload::Marker& marker);
  std::optional<LiveIteration> next_complete();

  std::string name_;
  std::map<long long, Rank> ranks_;
  std::uint64_t next_emit_ = 0;
  Nanos last_emitted_end_{0};  // the end of the latest iteration emitted
  bool heard_any_ = false;
};

}  // namespace wattwise::tune
