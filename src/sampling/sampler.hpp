#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/clock.hpp"
#include "hw/gpu.hpp"
#include "sampling/sampler_config.hpp"
#include "sampling/trace.hpp"

namespace wattwise::sampling {

// Reads a set of GPUs into one GpuTrace each, at three cadences:
//   counters  one read of one GPU's energy counter per tick, GPUs in turn (a read costs ~3 ms);
//   fast      instantaneous and averaged power of every GPU;
//   telemetry clocks, utilisation, temperature, P-state, PCIe, memory of every GPU (slower);
//   drain     the buffered 20 ms power samples of every GPU, device time mapped to our time line.
// The work of each cadence is a plain method so that drivers decide when it runs: ThreadedDriver (real
// time, one thread per cadence) or VirtualDriver (simulated time, one thread). Each cadence writes only
// its own store, so the three may run on three threads without a lock; the stores are merged in
// take_traces(), after the drivers have stopped. Gpu implementations must allow concurrent reads.
class Sampler {
 public:
  // `gpus` are not owned and must outlive the sampler. Throws a usage error for periods below the floors.
  Sampler(std::vector<hw::Gpu*> gpus, Clock& clock, SamplerConfig config = {});

  const SamplerPeriods& periods() const { return periods_; }
  std::size_t gpu_count() const { return gpus_.size(); }

  // Before the cadences start: one counter read per GPU (the baseline of the totals), and buffered
  // samples older than `now` are marked as seen so the trace starts at the measurement's start.
  void begin(Nanos now);
  // Reads the next GPU's counter (round robin), recording the read's cost. `now`: just before the read.
  void sample_counters(Nanos now);
  // Reads instantaneous power, averaged power and telemetry of every GPU, stamped `now`.
  void sample_fast(Nanos now);
  // Reads hw::Telemetry of every GPU, stamped `now`.
  void sample_telemetry(Nanos now);
  // Fetches the samples buffered since the last drain.
  void drain_samples(Nanos now);
  // After the cadences stopped: one last counter read per GPU and a last drain, so totals cover the end.
  void finish(Nanos now);

  // Drains that came later than the device buffer's span after the previous one (samples may be lost).
  std::uint64_t late_drains() const { return drain_.late_drains; }

  // Hands over everything sampled so far, one trace per GPU in constructor order; the stores are emptied.
  std::vector<GpuTrace> take_traces();

 private:
  struct CounterStore {
    std::size_t next_gpu = 0;
    std::vector<std::vector<CounterReading>> readings;
  };
  struct FastStore {
    std::vector<std::vector<PowerReading>> instant;
    std::vector<std::vector<PowerReading>> average;
  };
  struct TelemetryStore {
    std::vector<std::vector<TelemetryReading>> readings;
  };
  struct DrainStore {
    std::vector<std::uint64_t> last_device_us;
    std::vector<std::vector<PowerReading>> samples;
    Nanos last_drain{0};
    bool drained_before = false;
    std::uint64_t late_drains = 0;
  };

  void read_counter(std::size_t gpu, Nanos before);
  void reset_stores();

  std::vector<hw::Gpu*> gpus_;
  Clock& clock_;
  SamplerConfig config_;
  SamplerPeriods periods_;
  CounterStore counters_;     // written only by the counter cadence
  FastStore fast_;            // written only by the fast cadence
  TelemetryStore telemetry_;  // written only by the telemetry cadence
  DrainStore drain_;          // written only by the drain cadence
};

}  // namespace wattwise::sampling
