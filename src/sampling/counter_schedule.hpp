#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "sampling/posting_grid.hpp"

namespace wattwise::sampling {

using namespace std::chrono_literals;

// When to read one GPU's energy counter. A read costs ~4 ms of CPU on an H100 (the driver spins) and the
// value changes only at the device's postings, every ~100 ms; between postings a read learns nothing. So:
//   learning  reads kLearnSpacing apart (a spacing that does not divide 100 ms, so the brackets fall at
//             varied places around the postings) until the posting grid is known to kLockedUncertainty;
//   locked    one read kReadGuard after every k-th predicted posting (postings_per_read); the 20 ms
//             buffered samples carry the shape in between, reconciled to these increments. Now and then
//             (kFirstRelock, doubling up to kMaxRelock) one extra read just before the posting checks the
//             lock and adds a narrow bracket, which refines this GPU's own period over a long baseline;
//             a miss goes back to learning;
//   blind     learning found no grid (a counter that does not move, irregular postings): a read every k
//             assumed periods, and learning again after 8 s, doubling up to kMaxBlindInterval;
//   fixed     --counter-interval: a read every period, no locking (the schedule before phase locking).
// The counter timeline (counter_timeline.hpp) places every increment on the grid again from the reads
// alone; this class only decides when to read.
// One read a second: ~0.4-0.9% of a core per GPU on an H100 at 4-9 ms of CPU a read. On the H100 this
// schedule gave the per-iteration and on/off phase figures of reads every 10 ms (docs/evidence/
// sampler-h100.md), and replays of dense traces found no loss from fewer reads (sampler-replay.txt): the
// 20 ms samples carry the shape, the counter only their level, so more reads buy nothing.
inline constexpr unsigned kDefaultPostingsPerRead = 10;
inline constexpr Nanos kLearnSpacing = 13ms;
inline constexpr Nanos kLockedUncertainty = 6ms;   // >= 2 x kBracketSlack, the least a grid can be known to
inline constexpr std::size_t kMaxLearnReads = 60;  // ~1 s of learning on a busy node, then blind
// A learning read that took longer than this was held up (a busy node preempts the driver's spin), and its
// bracket is too wide to lock on. When at least kSlowLearnFraction of a burst's first kLearnProbeReads reads
// were, the burst ends there (blind, learning again later) instead of spending all kMaxLearnReads reads of
// ~4 ms of CPU each: on a saturated node each failed burst cost ~240 ms of CPU, repeated every 8-64 s.
inline constexpr Nanos kSlowLearnRead = 13ms;
inline constexpr std::size_t kLearnProbeReads = 20;
inline constexpr double kSlowLearnFraction = 0.75;
inline constexpr Nanos kReadGuard = 8ms;  // > kLockedUncertainty: a locked read comes after its posting
inline constexpr Nanos kFirstRelock = 500ms;
inline constexpr Nanos kMaxRelock = 8s;
inline constexpr Nanos kMaxBlindInterval = 64s;   // blind: learning again after 8, 16, ... 64 s
inline constexpr std::size_t kKeptBrackets = 32;  // the fit's memory: a few minutes of relocks

// Where one GPU's counter reads went (sampler_cost in `measure --json`): each read costs ~4 ms of CPU on an
// H100, so these say which part of the schedule is the bill.
struct CounterScheduleStats {
  std::uint64_t reads = 0;           // every read, whatever the mode
  std::uint64_t learning_reads = 0;  // reads while learning the posting grid (dense, kLearnSpacing apart)
  std::uint64_t learning_bursts =
      0;                            // times learning began: the first, after a miss, blind retries, relearn()
  std::uint64_t relock_checks = 0;  // extra reads just before a posting, checking the lock
  std::uint64_t relock_misses = 0;  // checks whose posting did not come: learning again
  std::uint64_t blind_reads = 0;    // reads every k assumed postings while no grid is known
  std::uint64_t given_up_learning = 0;  // learning bursts ended without a grid (then blind)
};

struct CounterScheduleConfig {
  std::optional<Nanos> fixed_period;  // set: the fixed mode (--counter-interval)
  Nanos fixed_offset{0};              // where this GPU's fixed reads fall within the period
  unsigned postings_per_read = kDefaultPostingsPerRead;
};

class CounterSchedule {
 public:
  enum class Mode { kLearning, kLocked, kBlind, kFixed };

  // `first_read`: when the first read is due (the measurement's start).
  CounterSchedule(CounterScheduleConfig config, Nanos first_read);

  Nanos next_read() const { return next_; }
  // The read that was due ran from `before` to `after` and returned `energy_mj` (nullopt: it failed or
  // the GPU has no counter); plans the next one.
  void on_read(Nanos before, Nanos after, std::optional<std::uint64_t> energy_mj);

  // Reads densely again from `now` (as when learning), so that the next postings are bracketed to a few ms:
  // asked at a job's end, whose last sparse read may be ~0.5 s before it. The fixed mode stays as it is.
  void relearn(Nanos now);

  Mode mode() const { return mode_; }
  const std::optional<PostingGrid>& grid() const { return grid_; }
  std::uint64_t relock_misses() const { return stats_.relock_misses; }
  std::uint64_t reads() const { return stats_.reads; }  // every read, whether its value was kept or not
  const CounterScheduleStats& stats() const { return stats_; }

 private:
  void learn(Nanos before, Nanos after);
  void track(Nanos after);
  void plan_locked(Nanos after);
  void start_learning(Nanos after);
  std::optional<PostingGrid> fit(std::size_t min_brackets) const;

  CounterScheduleConfig config_;
  Mode mode_;
  Nanos next_;
  std::optional<Nanos> last_before_;  // when the last successful read began, and its value
  std::uint64_t last_mj_ = 0;
  bool changed_ = false;  // the last read's value differed from the one before
  std::vector<PostingBracket> brackets_;
  std::optional<PostingGrid> grid_;
  std::size_t learn_reads_ = 0;
  std::size_t slow_learn_reads_ = 0;  // of learn_reads_, those longer than kSlowLearnRead
  std::uint64_t brackets_added_ = 0;  // ever; learning locks only on a bracket of its own
  std::uint64_t brackets_at_learn_start_ = 0;
  Nanos relock_interval_ = kFirstRelock;
  Nanos next_relock_{0};
  Nanos blind_until_{0};
  Nanos blind_interval_ = kMaxRelock / 2;
  bool pre_read_next_ = false;  // the read planned is the relock's check just before a posting
  bool checking_ = false;       // the read planned is the one after that check
  Nanos target_posting_{0};
  Nanos last_cost_{0};  // the last read's duration: a check read must end before its posting
  CounterScheduleStats stats_;
};

}  // namespace wattwise::sampling
