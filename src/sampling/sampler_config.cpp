#include "sampling/sampler_config.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "core/error.hpp"
#include "sampling/posting_grid.hpp"

namespace wattwise::sampling {
namespace {

double ms(Nanos d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

SamplerPeriods resolve_periods(const SamplerConfig& config, std::size_t gpu_count) {
  const std::size_t n = std::max<std::size_t>(gpu_count, 1);
  const Nanos counter_floor = kCounterReadBudget * static_cast<std::int64_t>(n);

  SamplerPeriods periods;
  if (config.counter_period) {
    if (*config.counter_period < counter_floor) {
      throw usage_error(
          fmt::format("energy counter period {:g} ms is too short for {} GPU(s): one read costs ~3 ms, use "
                      "at least {:g} ms",
                      ms(*config.counter_period), n, ms(counter_floor)));
    }
    periods.counter_per_gpu = *config.counter_period;
    periods.counter_phase_locked = false;
  } else {
    if (config.postings_per_read < 1 || config.postings_per_read > kMaxPostingsPerRead) {
      throw usage_error(fmt::format("counter reads every {} postings is out of range: use 1 to {}",
                                    config.postings_per_read, kMaxPostingsPerRead));
    }
    periods.counter_per_gpu = kAssumedPostingPeriod * config.postings_per_read;
  }

  if (config.fast_period < kMinFastPeriod) {
    throw usage_error(fmt::format("sampling interval {:g} ms is too short: use at least {:g} ms",
                                  ms(config.fast_period), ms(kMinFastPeriod)));
  }
  periods.fast = config.fast_period;

  if (config.drain_period < kMinDrainPeriod || config.drain_period > kMaxDrainPeriod) {
    throw usage_error(fmt::format(
        "power sample drain period {:g} ms is out of range: use {:g} ms to {:g} ms (the buffer holds ~2.4 s)",
        ms(config.drain_period), ms(kMinDrainPeriod), ms(kMaxDrainPeriod)));
  }
  periods.drain = config.drain_period;

  if (config.telemetry_period < kMinTelemetryPeriod) {
    throw usage_error(fmt::format("telemetry period {:g} ms is too short: use at least {:g} ms",
                                  ms(config.telemetry_period), ms(kMinTelemetryPeriod)));
  }
  periods.telemetry = config.telemetry_period;
  if (config.pcie_period && *config.pcie_period < kMinPciePeriod) {
    throw usage_error(fmt::format(
        "PCIe throughput period {:g} ms is too short: each read blocks sampling ~42 ms, use at least {:g} ms",
        ms(*config.pcie_period), ms(kMinPciePeriod)));
  }
  periods.pcie = config.pcie_period;
  return periods;
}

}  // namespace wattwise::sampling
