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
//             assumed periods, and learning again after kMaxRelock;
//   fixed     --counter-interval: a read every period, no locking (the schedule before phase locking).
// The counter timeline (counter_timeline.hpp) places every increment on the grid again from the reads
// alone; this class only decides when to read.
inline constexpr unsigned kDefaultPostingsPerRead = 5;
inline constexpr Nanos kLearnSpacing = 13ms;
inline constexpr Nanos kLockedUncertainty = 3ms;
inline constexpr std::size_t kMaxLearnReads = 40;  // ~0.5 s of learning, then blind
inline constexpr Nanos kReadGuard = 5ms;
inline constexpr Nanos kFirstRelock = 500ms;
inline constexpr Nanos kMaxRelock = 8s;
inline constexpr std::size_t kKeptBrackets = 32;  // the fit's memory: a few minutes of relocks

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

  Mode mode() const { return mode_; }
  const std::optional<PostingGrid>& grid() const { return grid_; }
  std::uint64_t relock_misses() const { return relock_misses_; }

 private:
  void learn(Nanos before, Nanos after);
  void track(Nanos after);
  void plan_locked(Nanos after);
  void start_learning(Nanos after);
  std::optional<PostingGrid> fit(std::size_t min_brackets) const;

  CounterScheduleConfig config_;
  Mode mode_;
  Nanos next_;
  std::optional<Nanos> last_mid_;  // the last successful read's midpoint and value
  std::uint64_t last_mj_ = 0;
  bool changed_ = false;  // the last read's value differed from the one before
  std::vector<PostingBracket> brackets_;
  std::optional<PostingGrid> grid_;
  std::size_t learn_reads_ = 0;
  std::uint64_t brackets_added_ = 0;  // ever; learning locks only on a bracket of its own
  std::uint64_t brackets_at_learn_start_ = 0;
  Nanos relock_interval_ = kFirstRelock;
  Nanos next_relock_{0};
  Nanos blind_until_{0};
  bool pre_read_next_ = false;  // the read planned is the relock's check just before a posting
  bool checking_ = false;       // the read planned is the one after that check
  Nanos target_posting_{0};
  Nanos last_cost_{0};  // the last read's duration: a check read must end before its posting
  std::uint64_t relock_misses_ = 0;
};

}  // namespace wattwise::sampling
