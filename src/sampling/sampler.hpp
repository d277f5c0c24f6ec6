#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "hw/gpu.hpp"
#include "sampling/counter_schedule.hpp"
#include "sampling/sample_compaction.hpp"
#include "sampling/sampler_config.hpp"
#include "sampling/sampler_cost.hpp"
#include "sampling/trace.hpp"

namespace wattwise::sampling {

struct HungCall;  // hung_call.hpp

// Reads a set of GPUs into one GpuTrace each, at four cadences:
//   counters  each GPU's energy counter on its own CounterSchedule (a read costs ~4 ms of CPU: locked to
//             the device's ~100 ms postings, one read every k-th posting; or a fixed period);
//   fast      instantaneous power of every GPU (the ~1 s averaged power only where there is none);
//   telemetry clocks, utilisation, temperature, P-state, PCIe, memory of every GPU (slower);
//   drain     the buffered 20 ms power samples of every GPU, device time mapped to our time line.
// The work of each cadence is a plain method so that drivers decide when it runs: ThreadedDriver (real
// time) or VirtualDriver (simulated time), both one thread running a CadenceLoop. Each cadence writes only
// its own store; the stores are merged in take_traces(), after the drivers have stopped or on the sampling
// thread itself (ThreadedDriver::every).
//
// A failing GPU never stops the sampler: a driver error (UNKNOWN, TIMEOUT, ...) costs that one reading and
// is counted; a lost GPU (hw::GpuLostError), or kMaxConsecutiveFailures failures in a row on one cadence,
// marks that GPU failed from that instant: it is not called again, the other GPUs go on being read, and
// its trace says when and why (GpuTrace::failure). A call that never returns marks its GPU failed from the
// call's start (mark_hung, by ThreadedDriver's supervisor, which carries the sampling on on a new thread).
class Sampler {
 public:
  // `gpus` are not owned and must outlive the sampler. Throws a usage error for periods below the floors.
  Sampler(std::vector<hw::GpuReadings*> gpus, Clock& clock, SamplerConfig config = {});

  const SamplerPeriods& periods() const { return periods_; }
  std::size_t gpu_count() const { return gpus_.size(); }

  // Before the cadences start: one counter read per GPU (the baseline of the totals), and buffered
  // samples older than `now` are marked as seen so the trace starts at the measurement's start.
  void begin(Nanos now);
  // When the next counter read of any GPU is due (after begin(); Nanos::max() when no GPU is left).
  Nanos next_counter_read() const;
  // Reads the counter of every GPU whose read is due at `now`, recording each read's cost.
  void sample_counters(Nanos now);
  // Each GPU's counter schedule (constructor order), for tests and the benchmark; valid after begin().
  const std::vector<CounterSchedule>& counter_schedules() const { return schedules_; }
  // Reads instantaneous power, averaged power and telemetry of every GPU, stamped `now`.
  void sample_fast(Nanos now);
  // Reads hw::Telemetry of every GPU, stamped `now`.
  void sample_telemetry(Nanos now);
  // Fetches the samples buffered since the last drain.
  void drain_samples(Nanos now);
  // Asks every GPU's counter to be read densely from the sampling thread's next tick (CounterSchedule::
  // relearn): the postings after a job's end are then bracketed to a few ms instead of falling between
  // sparse reads ~0.5 s apart, which a busy node can misplace by a whole posting. Safe from any thread.
  void read_densely() { dense_reads_requested_ = true; }
  // Where windows will be cut (a measurement's marker instants in [from, to], sorted), asked from the
  // sampling thread when old samples are compacted: with it, samples away from those instants merge
  // whatever the power does (sample_compaction.hpp), so a noisy load's trace stays small too; without it,
  // only steady runs merge. Set before the cadences start; what it reads must outlive the sampling.
  using WindowEdges = std::function<std::vector<Nanos>(Nanos from, Nanos to)>;
  void set_window_edges(WindowEdges edges) { window_edges_ = std::move(edges); }
  // A long job whose phases before `before` are accounted already (measure/phase_folding.hpp) needs its
  // trace there no longer, but near the begins of its phases still open (`edges`, asked on the sampling
  // thread as set_window_edges's): from then on, readings older than `before` (and than the compaction
  // age) are kept one a kCoarseSpan, the counter's reads too (sample_compaction.hpp), and the finest
  // power's peak among them is kept aside (GpuTrace::coarsened_peak_w). `before` only moves forward; safe
  // from any thread. Set the edges before the cadences start.
  void coarsen_before(Nanos before);
  void set_coarse_edges(WindowEdges edges) { coarse_edges_ = std::move(edges); }
  // On the sampling thread: applies a pending read_densely().
  void apply_dense_request(Nanos now);
  // After the cadences stopped: one last counter read per GPU and a last drain, so totals cover the end.
  void finish(Nanos now);

  // What each GPU's sampling cost so far: its calls by kind and its counter schedule's reads (constructor
  // order). Call it after the drivers stopped, or on the sampling thread itself.
  std::vector<GpuSamplerCost> cost() const;

  // Drains that came later than the device buffer's span after the previous one (samples may be lost).
  std::uint64_t late_drains() const { return drain_.late_drains; }

  // Hands over everything sampled so far, one trace per GPU in constructor order; the stores are emptied.
  // Call it after the drivers stopped, or on the sampling thread itself (ThreadedDriver::every): the
  // exporter takes the readings there every fraction of a second while sampling goes on.
  // A GPU that failed stays failed (a lost GPU does not come back): later traces report it again.
  std::vector<GpuTrace> take_traces();

  // A copy of the readings taken from `since` on, one trace per GPU in constructor order, while the
  // cadences run; safe from any thread. Each source keeps the one reading just before `since` too (the
  // baseline of the first counter increment, the left edge of the first power interval). Telemetry is
  // left out. The live side of `tune` cuts each iteration's energy from these (EnergyAccounting).
  std::vector<GpuTrace> snapshot_since(Nanos since) const;

  // Readings kept so far, summed over the GPUs and their sources (the memory a long job's trace holds); safe
  // from the sampling thread, or after the drivers stopped.
  std::size_t kept_readings() const;

  // True once the GPU at `position` (constructor order) has been marked failed; safe from any thread.
  bool failed(std::size_t position) const;

  // Marks the GPU of `hung` failed (lost) from the instant its call began: a call that has not returned
  // for `limit` (ThreadedDriver's supervisor, hung_call.hpp). Safe from any thread; the thread in the call
  // must have been given up, so that it never writes again.
  void mark_hung(const HungCall& hung, Nanos limit);

  // Called once per GPU, at the moment it is marked failed, on the sampling thread that found out (so
  // people hear of a lost GPU during a long job, not after it). Set before the cadences start.
  using FailureListener = std::function<void(std::size_t position, const SourceFailure& failure)>;
  void on_failure(FailureListener listener) { on_failure_ = std::move(listener); }

 private:
  // Each cadence's own count of failed readings per GPU, written only by that cadence's thread.
  struct Health {
    std::vector<unsigned> consecutive;
    std::vector<std::uint64_t> failed_readings;
  };
  Nanos last_counter_pass_{Nanos::min()};  // when sample_counters last ran (late reads are measured from it)
  struct CounterStore {
    std::vector<std::vector<CounterReading>> readings;
    std::vector<std::size_t> coarsened;  // per GPU: reads before this index are thinned to kCoarseSpan
    std::vector<std::uint64_t> late_reads;  // per GPU: reads begun kLateCounterRead or more after due
    std::vector<Nanos> max_delay;
    std::vector<HeldUpCalls> thinned_held_up;  // per GPU: of the reads the coarsening removed
    Health health;
  };
  struct FastStore {
    std::vector<std::vector<PowerReading>> instant;
    std::vector<std::size_t> thinned;  // per GPU: instant readings before this index are thinned already
    std::vector<std::size_t> coarsened;  // per GPU: instant readings before this index are coarsened
    std::vector<std::optional<double>> coarsened_peak_w;  // per GPU: the peak of those coarsened away
    std::vector<std::vector<PowerReading>> average;
    std::vector<std::size_t> average_coarsened;
    Health health;
  };
  struct TelemetryStore {
    std::vector<std::vector<TelemetryReading>> readings;
    std::vector<std::size_t> thinned;  // per GPU: readings before this index are thinned already
    std::vector<std::size_t> coarsened;
    Health health;
  };
  struct DrainStore {
    std::vector<std::uint64_t> last_device_us;
    // Per GPU: where that last sample lies on the samples' time line, mapped as it was recorded (a gap
    // begins there though CLOCK_REALTIME was stepped since); at begin(), the start.
    std::vector<Nanos> last_sample_t;
    std::vector<std::vector<PowerReading>> samples;
    std::vector<std::vector<SampleGap>> gaps;  // per GPU: where a late drain found samples dropped
    std::vector<std::size_t> compacted;  // per GPU: samples before this index are compacted already
    std::vector<std::size_t> coarsened;  // per GPU: samples before this index are coarsened already
    std::vector<std::optional<double>> coarsened_peak_w;
    // Per GPU: when its samples were last drained without failing (begin() counts as one); kept across
    // take_traces(), as last_device_us is: a drain is late by the time since, not since the last attempt.
    std::vector<std::optional<Nanos>> last_drained;
    std::uint64_t late_drains = 0;  // drains that came late for some GPU
    Health health;
  };

  void read_counter(std::size_t gpu, Nanos before);
  // Runs `call` (one reading of GPU `gpu`) and adds its CPU and wall time to that GPU's cost of `kind`.
  template <typename Call>
  auto timed(std::size_t gpu, GpuCall kind, Call&& call);
  hw::Telemetry read_telemetry(std::size_t gpu, Nanos now);
  void compact_old_samples(std::size_t gpu, Nanos now);
  // Where the readings old enough to compact end (exclusive; the last old one is kept as the left edge of
  // the next batch), once a batch's worth has aged past the compaction age; nullopt before that.
  template <typename Reading>
  std::optional<std::size_t> old_readings_end(const std::vector<Reading>& readings, std::size_t done,
                                              Nanos now) const;
  // Thins `readings` (a GPU's instantaneous power or telemetry) older than the compaction age, away from
  // window edges (thin_point_readings); `done` says how far earlier passes went.
  template <typename Reading>
  void thin_old_readings(std::vector<Reading>& readings, std::size_t& done, Nanos now);
  // The rule for readings in [from, to]: window edges when they are known, else steady runs only.
  CompactionRule compaction_rule(Nanos from, Nanos to) const;
  // Coarsens `readings` older than coarsen_before()'s instant, from `coarsened` on and not beyond `limit`
  // (what the finer pass has done, whose left edges it keeps): `thin` is compact_samples,
  // thin_point_readings or thin_counter_reads. Moves `limit` down by what it removed. With `peak_w`, the
  // highest power among the readings it coarsened is kept there.
  template <typename Reading, typename Thin>
  void coarsen_old(std::vector<Reading>& readings, std::size_t& coarsened, std::size_t* limit, Thin thin,
                   std::optional<double>* peak_w);
  Nanos counter_due(std::size_t gpu) const;
  void reset_stores();
  // Runs `read` (the calls to GPU `gpu`) unless that GPU has failed; a failure is counted in `health`
  // and may mark the GPU failed. True when `read` completed.
  template <typename Read>
  bool guarded(std::size_t gpu, Health& health, Read&& read);
  // `hung_since`: a call that never returned, begun then (the failure's instant).
  void mark_failed(std::size_t gpu, bool gpu_lost, const std::string& error,
                   std::optional<Nanos> hung_since = {});
  // Appends `reading`, or with `drop_repeats` replaces the inner reading of a run of equal values.
  template <typename Reading>
  static void record(std::vector<Reading>& readings, const Reading& reading, bool drop_repeats);

  std::vector<hw::GpuReadings*> gpus_;
  Clock& clock_;
  SamplerConfig config_;
  SamplerPeriods periods_;
  CounterStore counters_;                      // written only by the counter cadence
  FastStore fast_;                             // written only by the fast cadence
  TelemetryStore telemetry_;                   // written only by the telemetry cadence
  DrainStore drain_;                           // written only by the drain cadence
  std::vector<CounterSchedule> schedules_;     // one per GPU, from begin(); outlive take_traces()
  std::vector<Nanos> counter_read_at_;         // when each GPU's last counter read began
  std::vector<GpuSamplerCost> costs_;          // per GPU; written only by the sampling thread
  Nanos next_pcie_read_{0};                    // with pcie_period: when PCIe throughput is next read
  std::vector<hw::PcieThroughput> last_pcie_;  // per GPU: the last PCIe throughput read
  // Failed GPUs: the flags are read by every cadence before each call; the reasons are written once.
  std::unique_ptr<std::atomic<bool>[]> failed_;
  mutable std::mutex failures_mutex_;
  std::vector<std::optional<SourceFailure>> failures_;
  FailureListener on_failure_;
  std::atomic<bool> dense_reads_requested_{false};
  WindowEdges window_edges_;
  WindowEdges coarse_edges_;
  std::atomic<std::int64_t> coarse_before_ns_{std::numeric_limits<std::int64_t>::min()};
  // Guards the counter, fast and drain stores against snapshot_since(): held only while a reading is
  // appended or copied, never across a call to a GPU, so a reader never delays a cadence by a read's cost.
  mutable std::mutex stores_mutex_;
};

}  // namespace wattwise::sampling
