// The invariants every measurement is checked against (measure/energy_checks.hpp): each one broken on
// purpose, the fallback to the counter alone, and the run of shared/fixtures/idle-gpu-scale5 (a starved
// sampler that charged an idle GPU 1233 J at 1032 W where its counter rose 228 J) replayed from its files.
#include "measure/energy_checks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "../sampling/simulate.hpp"
#include "measure/attribution.hpp"
#include "report/trace_csv.hpp"
#include "report/trace_replay.hpp"

namespace wattwise::measure {
namespace {

using namespace std::chrono_literals;
using wattwise::testing::FakeGpuOptions;
using sampling::testing::simulate;
using sampling::testing::square_wave;

bool failed(const Measurement& m, std::size_t gpu, const std::string& check) {
  return std::any_of(m.checks.failures.begin(), m.checks.failures.end(),
                     [&](const EnergyCheckFailure& f) { return f.gpu == gpu && f.check == check; });
}

// One fake GPU sampled 0-6 s, the job from 0.5 to 5.5 s; `tamper` may spoil its trace.
Measurement one_gpu_run(wattwise::testing::PowerFunction power, std::optional<double> limit_w,
                        const std::function<void(sampling::GpuTrace&)>& tamper = {}) {
  auto sim = simulate(std::move(power), FakeGpuOptions{}, 6s);
  Measurement m;
  m.job_start = 500ms;
  m.job_end = 5500ms;
  hw::GpuIdentity id;
  m.gpus.push_back(id);
  GpuEnergy e;
  e.gpu = id;
  e.power_limit_max_w = limit_w;
  m.gpu_energy.push_back(e);
  m.traces.push_back(std::move(sim.trace));
  if (tamper) tamper(m.traces.back());
  return m;
}

// `live` written as a trace and phases CSV (as `measure --trace` writes them) and read back, as `replay` does.
report::ReplayedRun written_and_replayed(const Measurement& live, const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir());
  const auto trace_path = dir / (name + ".csv"), phases_path = dir / (name + ".phases.csv");
  {
    std::ofstream trace(trace_path), phases(phases_path);
    report::write_trace_csv(trace, live);
    report::write_phases_csv(phases, live);
  }
  return report::read_replayed_run(trace_path.string(), phases_path.string(), {0, 700.0});
}

TEST(EnergyChecks, AWellMeasuredRunPassesEveryCheckWithItsTruthInsideTheBar) {
  auto sim_truth = [](Nanos t) { return square_wave(600, 200ms, 100, 500ms)(t); };
  Measurement m = one_gpu_run(sim_truth, 700);
  workload::Phase p;
  p.name = "step";
  for (Nanos t = 600ms; t + 300ms < 5400ms; t += 350ms) {
    p.begin = t;
    p.end = t + 300ms;
    m.phases.push_back(p);
  }
  const auto lines = account_checked(m, false);
  EXPECT_TRUE(m.checks.passed()) << (lines.empty() ? "" : lines.front());
  EXPECT_EQ(m.checks.checked.size(), 5u);
  EXPECT_FALSE(m.gpu_energy[0].counter_only);
  ASSERT_TRUE(m.gpu_energy[0].energy_j);
  EXPECT_GT(m.gpu_energy[0].energy_uncertainty_j, 0.0);
  ASSERT_FALSE(m.phase_summaries.empty());
  EXPECT_GT(m.phase_summaries[0].uncertainty_j, 0.0);
  EXPECT_GT(m.phase_instances[0].uncertainty_j, 0.0);
}

TEST(EnergyChecks, SamplesThatDisagreeWithTheCounterBeyondPhysicsFallBackToTheCounterAlone) {
  // Samples at a tenth of the truth: the alignment's scale is 10, no sensor disagrees with itself so much.
  Measurement m = one_gpu_run(square_wave(600, 200ms, 100, 500ms), 700, [](sampling::GpuTrace& t) {
    for (auto& s : t.power_samples) s.power_w /= 10;
    t.power_instant.clear();
  });
  const auto lines = account_checked(m, false);
  EXPECT_TRUE(failed(m, 0, "alignment-scale"));
  EXPECT_TRUE(m.gpu_energy[0].counter_only);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("alignment-scale"), std::string::npos) << lines.front();
  // The figure is the counter's alone, read by read.
  const sampling::EnergyAccounting accountant(m.traces[0]);
  EXPECT_NEAR(*m.gpu_energy[0].energy_j, *accountant.counter_only(500ms, 5500ms).joules, 1e-9);
  EXPECT_EQ(m.gpu_energy[0].method, sampling::EnergyMethod::kCounter);
}

TEST(EnergyChecks, AnAverageAboveTheHighestPowerLimitIsSaidEvenWhenTheCounterItselfSaysSo) {
  Measurement m = one_gpu_run([](Nanos) { return 300.0; }, 100);
  const auto lines = account_checked(m, false);
  EXPECT_TRUE(failed(m, 0, "power-limit"));
  EXPECT_FALSE(m.checks.passed());
  bool by_counter = false;
  for (const auto& f : m.checks.failures) by_counter |= f.detail.find("by the counter alone") != std::string::npos;
  EXPECT_TRUE(by_counter) << "the counter's own word is kept and said";
}

TEST(EnergyChecks, AnEnergyOutsideTheCounterBracketsOrAboveThePeakIsCaught) {
  Measurement m = one_gpu_run([](Nanos) { return 200.0; }, 700);
  sampling::EnergyAccounting accountant(m.traces[0]);
  attribute_energy(
      m, [&](std::size_t, Nanos t0, Nanos t1) { return accountant.energy(t0, t1); },
      [&](std::size_t, Nanos t0, Nanos t1) { return accountant.energy(t0, t1); });
  *m.gpu_energy[0].energy_j *= 3;  // as the fixture's 6.4 times
  std::vector<sampling::EnergyAccounting> accountants;
  accountants.emplace_back(m.traces[0]);
  const auto failures = check_energy(m, accountants);
  auto has = [&](const std::string& check) {
    return std::any_of(failures.begin(), failures.end(), [&](const auto& f) { return f.check == check; });
  };
  EXPECT_TRUE(has("counter-brackets"));
  EXPECT_TRUE(has("peak-power"));
}

TEST(EnergyChecks, PhasesSummingToMoreThanTheirGpuOverTheirSpanAreCaught) {
  Measurement m = one_gpu_run([](Nanos) { return 200.0; }, 700);
  workload::Phase p;
  p.name = "step";
  for (Nanos t = 1s; t < 3s; t += 500ms) {
    p.begin = t;
    p.end = t + 500ms;
    m.phases.push_back(p);
  }
  sampling::EnergyAccounting accountant(m.traces[0]);
  auto window = [&](std::size_t, Nanos t0, Nanos t1) { return accountant.energy(t0, t1); };
  attribute_energy(m, window, window);
  std::vector<sampling::EnergyAccounting> accountants;
  accountants.emplace_back(m.traces[0]);
  EXPECT_TRUE(check_energy(m, accountants).empty());
  *m.phase_instances[1].energy_per_gpu_j[0] += 60;  // 100 J phases; the span holds 400 J +- a few
  const auto failures = check_energy(m, accountants);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].check, "phases-within-gpu");
}

// The fixture's files sit in ../shared beside the clone (CI and the sandbox alike).
std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(WATTWISE_SHARED_DIR) / "fixtures" / "idle-gpu-scale5" / name;
}

// A counter read only once a second leaves no posting grid to learn. Over a 5 s job, which outlasts the time
// a grid takes to learn on an idle CPU, that is a starved sampler: said, with the reason. The same reads over
// a job shorter than that learning time say nothing about the CPU, and no warning is printed.
TEST(EnergyChecks, AGridNeverLearntIsStarvationOnlyInAJobLongEnoughToLearnIt) {
  const auto thin = [](sampling::GpuTrace& t) {
    std::vector<sampling::CounterReading> kept;
    for (std::size_t i = 0; i < t.energy.size(); i += 97) kept.push_back(t.energy[i]);
    kept.push_back(t.energy.back());
    t.energy = std::move(kept);
  };
  Measurement long_job = one_gpu_run([](Nanos) { return 300.0; }, 700, thin);
  const auto lines = account_checked(long_job, true);
  EXPECT_FALSE(long_job.gpu_energy[0].grid_learnt);
  EXPECT_TRUE(long_job.gpu_energy[0].had_time_to_learn);
  EXPECT_TRUE(long_job.gpu_energy[0].starved());
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("the sampler was starved of CPU") != std::string::npos;
  })) << (lines.empty() ? "no line" : lines.front());

  Measurement short_job = one_gpu_run([](Nanos) { return 300.0; }, 700, thin);
  short_job.job_end = short_job.job_start + 400ms;
  const auto quiet = account_checked(short_job, true);
  EXPECT_FALSE(short_job.gpu_energy[0].had_time_to_learn);
  EXPECT_FALSE(short_job.gpu_energy[0].starved());
  EXPECT_TRUE(std::none_of(quiet.begin(), quiet.end(), [](const std::string& l) {
    return l.find("starved") != std::string::npos;
  })) << quiet.front();
}

// A read begun on time whose driver call then lasted 300 ms (its thread starved inside the call: on an H100
// at 2.6% of a core, 81 of 103 reads took over 100 ms while 6 had begun late): counted apart, said, starved.
// A call of 60 ms, as a busy node's reads take, is not held up.
TEST(EnergyChecks, AReadHeldUpInsideItsCallIsCountedAndCallsTheSamplerStarved) {
  const auto hold_up = [](Nanos cost) {
    return [cost](sampling::GpuTrace& t) { t.energy[t.energy.size() / 2].read_cost = cost; };
  };
  Measurement held = one_gpu_run([](Nanos) { return 300.0; }, 700, hold_up(300ms));
  const auto lines = account_checked(held, true);
  EXPECT_EQ(held.gpu_energy[0].late_counter_reads, 0u);
  EXPECT_EQ(held.gpu_energy[0].held_up_counter_reads, 1u);
  EXPECT_EQ(held.gpu_energy[0].max_counter_read_call, 300ms);
  EXPECT_TRUE(held.gpu_energy[0].starved());
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("1 counter read(s) were held up inside the driver call (up to 300 ms)") != std::string::npos;
  })) << (lines.empty() ? "no line" : lines.front());

  Measurement busy = one_gpu_run([](Nanos) { return 300.0; }, 700, hold_up(60ms));
  account_checked(busy, true);
  EXPECT_EQ(busy.gpu_energy[0].held_up_counter_reads, 0u);
  EXPECT_FALSE(busy.gpu_energy[0].starved());
}

// A long job whose every counter read was held up 150 ms, its reads before the 4th minute coarsened (a folded
// job's: Sampler::coarsen_before) to one a minute: the held-up reads thinned away still count, as the late
// reads beside them do. Counted from the reads kept, it said 77 held up where 383 were (main 9c181c3).
TEST(EnergyChecks, HeldUpReadsThatALongJobsCoarseningThinnedAwayStillCount) {
  const auto run = [](bool coarsen) {
    VirtualClock clock(0ns);
    FakeGpuOptions options;
    options.counter_read_cost = 150ms;
    wattwise::testing::FakeGpu gpu(clock, [](Nanos) { return 300.0; }, options, &clock, -5s);
    sampling::Sampler sampler({&gpu}, clock, sampling::SamplerConfig{});
    // At 4 min the coarsening; the job's last event at 5 min ends the run.
    std::optional<Nanos> next = 4min;
    sampling::SimulatedJob job{[&] { return next; },
                               [&](Nanos now) {
                                 if (coarsen && now == 4min) sampler.coarsen_before(now);
                                 next = now < 5min ? std::optional<Nanos>(5min) : std::nullopt;
                               }};
    sampling::VirtualDriver(sampler, clock).run_until(6min, job);
    Measurement m;
    m.job_start = 1s;
    m.job_end = 5min - 1s;
    hw::GpuIdentity id;
    m.gpus.push_back(id);
    GpuEnergy e;
    e.gpu = id;
    m.gpu_energy.push_back(e);
    m.traces = sampler.take_traces();
    account_checked(m, true);
    return std::pair{m.traces[0].energy.size(), m.gpu_energy[0]};
  };
  const auto [all_kept, whole] = run(false);
  const auto [kept, coarsened] = run(true);
  ASSERT_LT(kept * 4, all_kept) << "the coarsening thinned the reads";
  ASSERT_EQ(whole.held_up_counter_reads, all_kept) << "every read was held up";
  EXPECT_EQ(coarsened.held_up_counter_reads, whole.held_up_counter_reads);
  EXPECT_EQ(coarsened.max_counter_read_call, whole.max_counter_read_call);
  EXPECT_EQ(coarsened.max_counter_read_call, 150ms);
}

// Two gaps recorded overlapping, one of them inverted (a clock stepped between two drains may leave them so),
// are one stretch of dropped samples, as the accounting reads them (sampling::disjoint_sample_gaps): the
// count says one, and the trace file holds it the right way round, so that its replay reads and counts it
// alike. On 163a32e live said 2, and the file's inverted sample_gap line made its reader refuse the file.
TEST(EnergyChecks, OverlappingOrInvertedSampleGapsAreOneStretchLiveAndInTheWrittenTrace) {
  const auto drop_samples = [](sampling::GpuTrace& trace) {
    trace.sample_gaps = {{2000ms, 2200ms}, {2300ms, 2100ms}};  // the second recorded inverted too
    std::erase_if(trace.power_samples, [](const sampling::PowerReading& r) { return r.t > 2000ms && r.t < 2300ms; });
  };
  Measurement live = one_gpu_run([](Nanos) { return 300.0; }, 700, drop_samples);
  account_checked(live, true);
  EXPECT_EQ(live.gpu_energy[0].sample_gaps, 1u);
  EXPECT_TRUE(live.gpu_energy[0].starved());

  report::ReplayedRun run = written_and_replayed(live, "overlapping-gaps");
  account_checked(run.measurement, true);
  EXPECT_EQ(run.measurement.gpu_energy[0].sample_gaps, live.gpu_energy[0].sample_gaps);
}

TEST(EnergyChecks, TheStarvedIdleGpuOfTheFixtureIsChargedWithinItsCounterNotSixTimesIt) {
  ASSERT_TRUE(std::filesystem::exists(fixture("t.csv"))) << fixture("t.csv") << " missing: ../shared beside the clone";
  // The fake driver's configuration: GPUs 0 and 1 ran the job, GPU 2 idled at 300/60 W; limits up to 700 W.
  report::ReplayedRun run =
      report::read_replayed_run(fixture("t.csv").string(), fixture("t.phases.csv").string(), {2, 700.0});
  Measurement& m = run.measurement;
  ASSERT_EQ(m.gpus.size(), 3u);
  account_checked(m, true);
  const GpuEnergy& idle = m.gpu_energy[2];
  ASSERT_TRUE(idle.energy_j && idle.avg_power_w && idle.peak_power_w);
  // Its counter rose 180 J over the job's first second and 198 J to the first read after the job.
  const sampling::EnergyAccounting accountant(m.traces[2]);
  const auto brackets = accountant.brackets(m.job_start, m.job_end);
  ASSERT_TRUE(brackets.outer_j);
  EXPECT_LE(*idle.energy_j, *brackets.outer_j);
  EXPECT_GE(*idle.energy_j, brackets.inner_j);
  EXPECT_LE(*idle.avg_power_w, 700.0);
  EXPECT_LE(*idle.avg_power_w, *idle.peak_power_w);
  // The fake's own integral over the job was 191.7 J (fixture README): inside the bar.
  EXPECT_NEAR(*idle.energy_j, 191.7, idle.energy_uncertainty_j);
  EXPECT_TRUE(idle.counter_only);
  EXPECT_TRUE(failed(m, 2, "alignment-scale")) << "scale 5.0 is no physical fit";
  // The grid was learnt only after the job ended, but the trace's reads came on time: the 1.2 s job ended
  // before the third GPU's turn to learn (the GPUs learn one after another, up to 0.78 s each). A late grid
  // in a job that short is no evidence of a starved sampler, and is not called one; the check above is what
  // keeps the figure physical.
  EXPECT_FALSE(idle.grid_learnt);
  EXPECT_FALSE(idle.had_time_to_learn);
  EXPECT_FALSE(idle.starved());
  // The job's GPUs drew constant power (400 and 150 W) and keep their reconciled figures.
  EXPECT_NEAR(*m.gpu_energy[0].avg_power_w, 400, 8);
  EXPECT_NEAR(*m.gpu_energy[1].avg_power_w, 150, 3);
}

// A late drain's gap in the buffered samples, a phase beginning inside it: the trace CSV records the gap
// (206ba8b), so the phase's bar replayed from the files is the live one, wider than with the gap unrecorded.
// The files' times are rounded to the microsecond and the replay refits the offset, so the bound is 2%; here
// they agreed to the mJ (122.529 J live and replayed, 19.777 J with the gap unrecorded; the file without its
// sample_gap line fails the test).
TEST(EnergyChecks, AReplayOfTheWrittenTraceWidensAPhaseWithAnEdgeInASampleGapAsLive) {
  const auto drop_samples = [](sampling::GpuTrace& trace) {
    const auto after = std::find_if(trace.power_samples.rbegin(), trace.power_samples.rend(),
                                    [](const sampling::PowerReading& r) { return r.t <= 2000ms; });
    const auto before = std::find_if(trace.power_samples.begin(), trace.power_samples.end(),
                                     [](const sampling::PowerReading& r) { return r.t >= 2200ms; });
    ASSERT_TRUE(after != trace.power_samples.rend() && before != trace.power_samples.end());
    trace.sample_gaps.push_back({after->t, before->t});
    std::erase_if(trace.power_samples,
                  [&](const sampling::PowerReading& r) { return r.t > trace.sample_gaps[0].after && r.t < trace.sample_gaps[0].before; });
  };
  const auto with_phase = [](Measurement m) {
    workload::Phase p;
    p.name = "step";
    p.begin = 2100ms;  // inside the gap
    p.end = 3000ms;
    m.phases.push_back(p);
    account_checked(m, false);
    return m;
  };
  const auto power = [](Nanos t) { return square_wave(600, 200ms, 100, 500ms)(t); };
  const Measurement live = with_phase(one_gpu_run(power, 700, drop_samples));
  Measurement unrecorded_input = one_gpu_run(power, 700, drop_samples);
  unrecorded_input.traces[0].sample_gaps.clear();
  const Measurement unrecorded = with_phase(std::move(unrecorded_input));
  ASSERT_EQ(live.phase_instances.size(), 1u);
  ASSERT_EQ(unrecorded.phase_instances.size(), 1u);
  const double live_bar = live.phase_instances[0].uncertainty_j;
  EXPECT_GT(live_bar, unrecorded.phase_instances[0].uncertainty_j + 10) << "the gap widens the live bar";

  report::ReplayedRun run = written_and_replayed(live, "gap-replay");
  Measurement& replayed = run.measurement;
  ASSERT_EQ(replayed.traces.size(), 1u);
  ASSERT_EQ(replayed.traces[0].sample_gaps.size(), 1u);
  account_checked(replayed, false);
  ASSERT_EQ(replayed.phase_instances.size(), 1u);
  EXPECT_NEAR(replayed.phase_instances[0].uncertainty_j, live_bar, 0.02 * live_bar);
  ASSERT_TRUE(replayed.phase_instances[0].energy_j && live.phase_instances[0].energy_j);
  EXPECT_NEAR(*replayed.phase_instances[0].energy_j, *live.phase_instances[0].energy_j, 0.02 * live_bar);
}

}  // namespace
}  // namespace wattwise::measure
