// A run during which a GPU was lost is a failed run in the database, with the GPU's error (issue 10 item 1).
#include <gtest/gtest.h>

#include "store/measured_run.hpp"

namespace wattwise::store {
namespace {

using namespace std::chrono_literals;

measure::Measurement two_gpu_measurement() {
  measure::Measurement m;
  m.job_start = 0s;
  m.job_end = 10s;
  for (unsigned i = 0; i < 2; ++i) {
    measure::GpuEnergy e;
    e.gpu.index = i;
    e.energy_j = 1000;
    m.gpus.push_back(e.gpu);
    m.gpu_energy.push_back(e);
  }
  return m;
}

TEST(RecordOf, ARunDuringWhichAGpuWasLostIsFailedWithTheGpusError) {
  measure::Measurement m = two_gpu_measurement();
  m.gpu_energy[1].failure =
      sampling::SourceFailure{12300ms, true, "GPU 1: nvmlDeviceGetSamples failed: GPU is lost"};
  const store::RunRecord r = record_of(plan::PlannedRun{}, m, {}, "", "");
  EXPECT_EQ(r.error, "GPU 1 lost at 12.3 s: GPU 1: nvmlDeviceGetSamples failed: GPU is lost");
}

TEST(RecordOf, AJobFailureAndAFailedGpuAreBothNamed) {
  measure::Measurement m = two_gpu_measurement();
  m.outcome.exit_code = 2;
  m.gpu_energy[0].failure =
      sampling::SourceFailure{1s, false, "5 readings in a row failed, the last: Timeout"};
  const store::RunRecord r = record_of(plan::PlannedRun{}, m, {}, "", "");
  EXPECT_EQ(r.error, "exit status 2; GPU 0 failed at 1.0 s: 5 readings in a row failed, the last: Timeout");
}

TEST(RecordOf, AHealthyRunHasNoError) {
  EXPECT_EQ(record_of(plan::PlannedRun{}, two_gpu_measurement(), {}, "", "").error, "");
}

}  // namespace
}  // namespace wattwise::store
