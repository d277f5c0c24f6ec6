#include "safety/dry_run.hpp"

#include <fmt/format.h>

#include <optional>

namespace wattwise::safety {
namespace {

std::string settings_text(const plan::PlannedRun& run) {
  std::string text;
  for (const auto& s : run.settings) text += fmt::format("{}{}={}", text.empty() ? "" : " ", s.knob, s.value);
  return text.empty() ? "(no knobs)" : text;
}

std::string clock_text(const std::optional<unsigned>& mhz) {
  return mhz ? fmt::format("locked {} MHz", *mhz) : std::string("unlocked/as set");
}

// The changes one GPU goes through over the plan, from its current settings, then back.
std::vector<std::string> changes_of(hw::GpuReadings& gpu, const plan::Plan& plan) {
  std::vector<std::string> lines;
  const auto limits = gpu.power_limits();
  const std::optional<double> original_w = limits ? std::optional(limits->current_w) : std::nullopt;
  std::optional<double> limit_w = original_w;
  std::optional<unsigned> sm, mem;
  const auto w = [](const std::optional<double>& v) {
    return v ? fmt::format("{} W", *v) : std::string("unknown");
  };
  for (const auto& run : plan.runs) {
    const auto& hw = run.hardware;
    if (hw.power_limit_w && hw.power_limit_w != limit_w) {
      lines.push_back(
          fmt::format("before run {}: power limit {} -> {}", run.index, w(limit_w), w(hw.power_limit_w)));
      limit_w = hw.power_limit_w;
    }
    if (hw.sm_clock_mhz && hw.sm_clock_mhz != sm) {
      lines.push_back(fmt::format("before run {}: SM clocks {} -> {}", run.index, clock_text(sm),
                                  clock_text(hw.sm_clock_mhz)));
      sm = hw.sm_clock_mhz;
    }
    if (hw.mem_clock_mhz && hw.mem_clock_mhz != mem) {
      lines.push_back(fmt::format("before run {}: memory clocks {} -> {}", run.index, clock_text(mem),
                                  clock_text(hw.mem_clock_mhz)));
      mem = hw.mem_clock_mhz;
    }
  }
  if (limit_w != original_w)
    lines.push_back(fmt::format("restore: power limit {} -> {}", w(limit_w), w(original_w)));
  if (sm) lines.push_back(fmt::format("restore: SM clocks {} -> reset (unlocked)", clock_text(sm)));
  if (mem) lines.push_back(fmt::format("restore: memory clocks {} -> reset (unlocked)", clock_text(mem)));
  return lines;
}

}  // namespace

std::string describe_dry_run(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                             const plan::Plan& plan) {
  std::string out =
      fmt::format("dry run: {} runs, nothing is changed, locked or written\n", plan.runs.size());
  for (const auto& run : plan.runs) {
    out += fmt::format("  run {:>4}{}  repeat {}  {}\n", run.index, run.warmup ? " (warm-up)" : "",
                       run.repeat, settings_text(run));
  }
  for (std::size_t index : gpu_indices) {
    hw::GpuReadings& gpu = system.gpu(index);
    const auto lines = changes_of(gpu, plan);
    out +=
        fmt::format("GPU {} ({}, {}): {}\n", gpu.identity().index, gpu.identity().name, gpu.identity().uuid,
                    lines.empty() ? "no change" : fmt::format("{} changes", lines.size()));
    for (const auto& line : lines) out += "  " + line + "\n";
  }
  return out;
}

}  // namespace wattwise::safety
