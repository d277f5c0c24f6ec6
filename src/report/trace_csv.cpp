#include "report/trace_csv.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include <fmt/format.h>

#include "sampling/trace.hpp"

namespace wattwise::report {

namespace {

enum Column : std::size_t {
  kEnergyMj,
  kPowerInstW,
  kPowerAvgW,
  kPowerSampleW,
  kSmClockMhz,
  kMemClockMhz,
  kUtilGpuPct,
  kUtilMemPct,
  kTempC,
  kPstate,
  kThrottleReasons,
  kPcieTxMbps,
  kPcieRxMbps,
  kMemUsedMib,
  kEnergyReadMs,
  kColumnCount
};

struct Row {
  Nanos t{0};
  unsigned gpu = 0;
  std::array<std::string, kColumnCount> cells;
};

template <typename T>
void set_if(Row& row, Column c, const std::optional<T>& value) {
  if (value) row.cells[c] = fmt::format("{}", *value);
}

std::string csv_escape(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

}  // namespace

const std::vector<TraceColumn>& trace_columns() {
  static const std::vector<TraceColumn> columns = {
      {"energy_mj", "total-energy counter, millijoules since driver load"},
      {"power_inst_w", "instantaneous power, watts"},
      {"power_avg_w", "averaged power (~1 s moving average), watts"},
      {"power_sample_w", "buffered 20 ms power sample, watts (time aligned to the monotonic clock)"},
      {"sm_clock_mhz", "SM clock, MHz"},
      {"mem_clock_mhz", "memory clock, MHz"},
      {"util_gpu_pct", "GPU utilisation, percent"},
      {"util_mem_pct", "memory utilisation, percent"},
      {"temp_c", "GPU temperature, degrees Celsius"},
      {"pstate", "performance state (0 = fastest)"},
      {"throttle_reasons", "clocks-event reasons bit mask"},
      {"pcie_tx_mbps", "PCIe transmit, MB/s"},
      {"pcie_rx_mbps", "PCIe receive, MB/s"},
      {"mem_used_mib", "memory used, MiB"},
      // Last, so that readers of the columns before it are unchanged. The counter's value comes from
      // somewhere inside the read; an offline replay (bench/replay_trace.cpp) needs this to bracket it.
      {"energy_read_ms", "how long the energy counter read took, ms (its value is from inside it)"},
  };
  return columns;
}

void write_trace_csv(std::ostream& out, const measure::Measurement& m, std::optional<unsigned> only_gpu) {
  std::vector<Row> rows;
  for (std::size_t i = 0; i < m.traces.size(); ++i) {
    const auto& trace = m.traces[i];
    const unsigned gpu = i < m.gpus.size() ? m.gpus[i].index : trace.gpu_index;
    if (only_gpu && gpu != *only_gpu) continue;
    for (const auto& r : trace.energy) {
      Row row{r.t, gpu, {}};
      row.cells[kEnergyMj] = std::to_string(r.energy_mj);
      row.cells[kEnergyReadMs] = fmt::format("{:.3f}", to_seconds(r.read_cost) * 1000);
      rows.push_back(std::move(row));
    }
    auto add_power = [&](const std::vector<sampling::PowerReading>& readings, Column c) {
      for (const auto& r : readings) {
        Row row{r.t, gpu, {}};
        row.cells[c] = fmt::format("{:.3f}", r.power_w);
        rows.push_back(std::move(row));
      }
    };
    add_power(trace.power_instant, kPowerInstW);
    add_power(trace.power_average, kPowerAvgW);
    add_power(trace.power_samples, kPowerSampleW);
    for (const auto& r : trace.telemetry) {
      Row row{r.t, gpu, {}};
      const auto& v = r.values;
      set_if(row, kSmClockMhz, v.sm_clock_mhz);
      set_if(row, kMemClockMhz, v.mem_clock_mhz);
      set_if(row, kUtilGpuPct, v.util_gpu_pct);
      set_if(row, kUtilMemPct, v.util_mem_pct);
      set_if(row, kTempC, v.temp_c);
      set_if(row, kPstate, v.pstate);
      set_if(row, kThrottleReasons, v.throttle_reasons);
      set_if(row, kPcieTxMbps, v.pcie_tx_mbps);
      set_if(row, kPcieRxMbps, v.pcie_rx_mbps);
      set_if(row, kMemUsedMib, v.mem_used_mib);
      rows.push_back(std::move(row));
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.t < b.t; });

  out << "# wattwise " << m.tool_version << " trace; backend " << m.backend
      << "; time_s is seconds since the job started (monotonic clock)\n";
  // The job's window: sampling goes on ~0.25 s past the job's end (the energy counter lags), so a reader
  // that integrates the trace must stop here to agree with the measurement (docs/report.md).
  out << fmt::format("# job_start_s={:.6f}\n# job_end_s={:.6f}\n", 0.0, m.wall_s());
  // Where a late drain lost buffered samples (the sample after a gap is held over it): a replay of the file
  // widens the bars of windows with an edge inside one as the live measurement did. Comment lines, so that
  // the columns and their readers are unchanged. As the accounting read them (the right way round, overlapping
  // ones as one): a gap recorded inverted (a clock stepped between drains) is no line a reader takes.
  for (std::size_t i = 0; i < m.traces.size(); ++i) {
    const unsigned gpu = i < m.gpus.size() ? m.gpus[i].index : m.traces[i].gpu_index;
    if (only_gpu && gpu != *only_gpu) continue;
    for (const auto& gap : sampling::disjoint_sample_gaps(m.traces[i].sample_gaps))
      out << fmt::format("{}gpu={} after_s={:.6f} before_s={:.6f}\n", kSampleGapLine, gpu,
                         to_seconds(gap.after - m.job_start), to_seconds(gap.before - m.job_start));
  }
  out << "time_s,gpu";
  for (const auto& c : trace_columns()) out << ',' << c.name;
  out << '\n';
  for (const auto& row : rows) {
    out << fmt::format("{:.6f}", to_seconds(row.t - m.job_start)) << ',' << row.gpu;
    for (const auto& cell : row.cells) out << ',' << cell;
    out << '\n';
  }
}

void write_phases_csv(std::ostream& out, const measure::Measurement& m) {
  out << "# wattwise " << m.tool_version << " phases; backend " << m.backend << "\n";
  out << "name,begin_s,end_s,rank,energy_j,method,counters,same_name_depth,energy_uncertainty_j\n";
  for (const auto& inst : m.phase_instances) {
    std::string counters;
    for (const auto& [key, value] : inst.phase.counters)
      counters += fmt::format("{}{}={}", counters.empty() ? "" : ";", key, value);
    out << csv_escape(inst.phase.name) << ','
        << fmt::format("{:.6f}", to_seconds(inst.phase.begin - m.job_start)) << ','
        << fmt::format("{:.6f}", to_seconds(inst.phase.end - m.job_start)) << ','
        << (inst.phase.rank ? std::to_string(*inst.phase.rank) : "") << ','
        << (inst.energy_j ? fmt::format("{:.6f}", *inst.energy_j) : "") << ','
        << sampling::to_string(inst.method) << ',' << csv_escape(counters) << ','
        << inst.phase.same_name_depth << ','
        << (inst.energy_j ? fmt::format("{:.6f}", inst.uncertainty_j) : "") << '\n';
  }
}

}  // namespace wattwise::report
