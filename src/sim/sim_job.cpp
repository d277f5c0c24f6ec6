#include "sim/sim_job.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "sim/noise.hpp"

namespace wattwise::sim {

using workload::Marker;
using workload::MarkerKind;

namespace {

constexpr int kTerminatedExitCode = 143;  // 128 + SIGTERM, as a shell reports it

}  // namespace

SimJob::SimJob(std::vector<SimGpu*> gpus, WorkloadProfile workload, JobOptions options, Nanos start)
    : gpus_(std::move(gpus)), workload_(std::move(workload)), options_(std::move(options)), deadline_(start) {
  if (gpus_.empty()) throw usage_error("a simulated job needs at least one GPU: pass gpus >= 1");
  if (options_.batch == 0 || options_.samples_per_epoch <= 0 || options_.epochs <= 0) {
    throw usage_error("simulated job: batch, samples per epoch and epochs must all be positive");
  }
  const std::int64_t samples_per_iteration = static_cast<std::int64_t>(options_.batch) * gpus_.size();
  iterations_per_epoch_ = (options_.samples_per_epoch + samples_per_iteration - 1) / samples_per_iteration;

  // Run-to-run noise: the job's throughput varies as a whole, each GPU's power a little on its own.
  Noise noise(options_.seed);
  workload_.samples_per_s *= std::max(1.0 + options_.noise_fraction * noise.normal(), 0.5);
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    WorkloadProfile load = workload_;
    const double power_noise = options_.power_noise_fraction.value_or(0.5 * options_.noise_fraction);
    const double power_factor = std::max(1.0 + power_noise * noise.normal(), 0.5);
    load.busy_power_w *= power_factor;
    load.static_power_w *= power_factor;
    gpu_loads_.push_back(load);
  }
  deadline_ = start + options_.start_gap;
}

std::int64_t SimJob::marked_iterations() const {
  return std::min(options_.iteration_markers_per_epoch.value_or(iterations_per_epoch_),
                  iterations_per_epoch_);
}

std::int64_t SimJob::samples_in_iteration(std::int64_t iteration) const {
  const std::int64_t per_iteration = static_cast<std::int64_t>(options_.batch) * gpus_.size();
  return std::min(per_iteration, options_.samples_per_epoch - iteration * per_iteration);
}

double SimJob::work_s_after(std::int64_t iterations) const {
  const std::int64_t per_iteration = static_cast<std::int64_t>(options_.batch) * gpus_.size();
  const auto samples = std::min(iterations * per_iteration, options_.samples_per_epoch);
  return static_cast<double>(samples) / (static_cast<double>(gpus_.size()) * workload_.samples_per_s);
}

std::optional<Nanos> SimJob::next_event() const {
  switch (stage_) {
    case Stage::kFinished:
      return std::nullopt;
    case Stage::kStartGap:
    case Stage::kEpochGap:
    case Stage::kEndGap:
      return deadline_;
    case Stage::kTraining:
      break;
  }
  const std::int64_t target = iteration_ < marked_iterations() ? iteration_ + 1 : iterations_per_epoch_;
  const double work_s = work_s_after(target);
  std::optional<Nanos> latest;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    // The slowest GPU decides when the (synchronised) iteration ends.
    const auto done = gpus_[i]->time_when_work_reaches(work_base_[i] + work_s);
    if (done && (!latest || *done > *latest)) latest = done;
  }
  return latest;
}

std::vector<Marker> SimJob::advance_to(Nanos t) {
  std::vector<Marker> markers;
  for (auto event = next_event(); event && *event <= t; event = next_event()) handle_event(*event, markers);
  return markers;
}

void SimJob::handle_event(Nanos t, std::vector<Marker>& out) {
  switch (stage_) {
    case Stage::kStartGap:
      emit(out, t, MarkerKind::kBegin, "training", {});
      begin_epoch(t, out);
      return;
    case Stage::kEpochGap:
      begin_epoch(t, out);
      return;
    case Stage::kEndGap:
      stage_ = Stage::kFinished;
      exit_code_ = 0;
      return;
    case Stage::kFinished:
      return;
    case Stage::kTraining:
      break;
  }
  if (iteration_ < marked_iterations()) {
    emit(out, t, MarkerKind::kEnd, "iteration",
         {{"samples", static_cast<double>(samples_in_iteration(iteration_))}});
    ++iteration_;
    if (iteration_ < marked_iterations()) {
      emit(out, t, MarkerKind::kBegin, "iteration",
           {{"samples", static_cast<double>(samples_in_iteration(iteration_))}});
    }
    if (iteration_ < iterations_per_epoch_) return;
  }
  end_epoch(t, out);
}

void SimJob::begin_epoch(Nanos t, std::vector<Marker>& out) {
  stage_ = Stage::kTraining;
  iteration_ = 0;
  work_base_.clear();
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    work_base_.push_back(gpus_[i]->work_s_at(t));
    gpus_[i]->start_load(gpu_loads_[i], t);
  }
  emit(out, t, MarkerKind::kBegin, "epoch", {{"epoch", static_cast<double>(epoch_)}});
  if (marked_iterations() > 0) {
    emit(out, t, MarkerKind::kBegin, "iteration",
         {{"samples", static_cast<double>(samples_in_iteration(0))}});
  }
}

void SimJob::end_epoch(Nanos t, std::vector<Marker>& out) {
  for (SimGpu* gpu : gpus_) gpu->stop_load(t);
  const auto samples = static_cast<double>(options_.samples_per_epoch);
  emit(out, t, MarkerKind::kEnd, "epoch", {{"epoch", static_cast<double>(epoch_)}, {"samples", samples}});
  ++epoch_;
  if (epoch_ < options_.epochs) {
    stage_ = Stage::kEpochGap;
    deadline_ = t + options_.epoch_gap;
  } else {
    emit(out, t, MarkerKind::kEnd, "training", {{"samples", samples * options_.epochs}});
    stage_ = Stage::kEndGap;
    deadline_ = t + options_.end_gap;
  }
}

void SimJob::terminate(Nanos at) {
  if (finished()) return;
  for (SimGpu* gpu : gpus_) gpu->stop_load(at);
  stage_ = Stage::kFinished;
  exit_code_ = kTerminatedExitCode;
}

void SimJob::emit(std::vector<Marker>& out, Nanos t, MarkerKind kind, const char* name,
                  std::map<std::string, double> counters) const {
  out.push_back(Marker{t, kind, name, std::move(counters), options_.pid, std::nullopt, std::nullopt});
}

}  // namespace wattwise::sim
