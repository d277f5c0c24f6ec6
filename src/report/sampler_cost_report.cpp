#include "report/sampler_cost_report.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace wattwise::report {
namespace {

using nlohmann::json;

double pct_of_core(Nanos cpu, double seconds) {
  return seconds > 0 ? 100.0 * to_seconds(cpu) / seconds : 0.0;
}

json counter_json(const sampling::GpuSamplerCost& gpu) {
  const sampling::CounterScheduleStats& c = gpu.counter;
  return {{"reads", c.reads},
          {"learning_reads", c.learning_reads},
          {"learning_bursts", c.learning_bursts},
          {"given_up_learning", c.given_up_learning},
          {"relock_checks", c.relock_checks},
          {"relock_misses", c.relock_misses},
          {"blind_reads", c.blind_reads},
          {"posting_period_ms",
           gpu.posting_period ? json(to_seconds(*gpu.posting_period) * 1e3) : json(nullptr)}};
}

}  // namespace

json sampler_cost_json(const measure::SamplerCostReport& cost) {
  json j = {{"startup_cpu_s", cost.startup_cpu_s},
            {"sampled_s", cost.sampled_s},
            {"sampling_thread_cpu_s", cost.sampling_thread_cpu_s},
            {"accounting_cpu_s", cost.accounting_cpu_s},
            {"gpus", json::array()}};
  for (const sampling::GpuSamplerCost& gpu : cost.gpus) {
    json calls = json::object();
    for (std::size_t k = 0; k < sampling::kGpuCallKinds; ++k) {
      const sampling::CallCost& call = gpu.calls[k];
      calls[sampling::to_string(static_cast<sampling::GpuCall>(k))] = {
          {"calls", call.calls},
          {"cpu_s", to_seconds(call.cpu)},
          {"wall_s", to_seconds(call.wall)},
          {"cpu_ms_per_call",
           call.calls > 0 ? json(to_seconds(call.cpu) * 1e3 / call.calls) : json(nullptr)}};
    }
    j["gpus"].push_back({{"index", gpu.gpu_index},
                         {"cpu_s", to_seconds(gpu.cpu())},
                         {"cpu_pct_of_core", pct_of_core(gpu.cpu(), cost.sampled_s)},
                         {"calls", calls},
                         {"counter_schedule", counter_json(gpu)}});
  }
  return j;
}

std::string sampler_cost_line(const measure::SamplerCostReport& cost) {
  if (cost.gpus.empty() || cost.sampled_s <= 0) return "";
  const double per_gpu_pct = 100.0 * cost.sampling_thread_cpu_s / cost.sampled_s / cost.gpus.size();
  // The kind that cost most, summed over the GPUs.
  std::size_t top = 0;
  std::array<Nanos, sampling::kGpuCallKinds> by_kind{};
  for (const auto& gpu : cost.gpus)
    for (std::size_t k = 0; k < sampling::kGpuCallKinds; ++k) by_kind[k] += gpu.calls[k].cpu;
  for (std::size_t k = 1; k < by_kind.size(); ++k)
    if (by_kind[k] > by_kind[top]) top = k;
  std::uint64_t reads = 0, learning = 0, checks = 0;
  for (const auto& gpu : cost.gpus) {
    reads += gpu.counter.reads;
    learning += gpu.counter.learning_reads;
    checks += gpu.counter.relock_checks;
  }
  return fmt::format("{:.2f}% of a core per GPU ({} {:.2f}%; counter reads {}: {} learning, {} lock checks)",
                     per_gpu_pct, sampling::to_string(static_cast<sampling::GpuCall>(top)),
                     pct_of_core(by_kind[top], cost.sampled_s) / cost.gpus.size(), reads, learning, checks);
}

}  // namespace wattwise::report
