#!/bin/bash
# The end-to-end accuracy tests on a starved machine (issue 20): every core held by busy processes (twice as
# many spinners as cores, plus one that forks all the time, as data loaders and their workers do), the
# accuracy tests run REPETITIONS times, every one must pass. `ctest -L load` (tests/e2e/CMakeLists.txt).
#
#   load_test.sh TEST_E2E [REPETITIONS]
set -u
test_e2e=$1
repetitions=${2:-20}
# The tests whose figures are checked against the fake driver's exact integrals: totals, phases, the idle
# GPU of a multi-rank job (the one the starved sampler once charged 6.4 times its energy).
filter='MeasureEnergyTest.PerGpuEnergyIsTheProfileIntegralOverTheJobWithinOnePercent'
filter+=':MeasureEnergyTest.PhaseEnergyOnTheConstantGpuIsPowerTimesDurationWithinOnePercent'
filter+=':MeasureEnergyTest.PhaseEnergyOnTheSquareWaveGpuFollowsTheProfile'
filter+=':MultirankTest.EveryGpuIncludingTheIdleOneIsItsProfileIntegralWithinItsEdges'
filter+=':MultirankTest.RankIterationEnergiesAddUpToTheirGpusEnergyOverTheWindowsWithinOnePercent'
filter+=':MultirankTest.NoGpuIsChargedMoreThanItsEnergyOverThePhasesSpanByAnyPhaseName'

# Under load the accuracy tests check the claim wattwise makes for a starved node: the truth within each
# figure's error bar (e2e_fixture.hpp, accuracy_tolerance), where unloaded they hold the strict tolerances.
export WATTWISE_E2E_UNDER_LOAD=1

burners=()
stop_burners() {
  # Only the processes this script started, by their ids.
  for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
}
trap stop_burners EXIT
trap 'exit 130' INT TERM

cores=$(nproc)
for ((i = 0; i < 2 * cores; ++i)); do
  bash -c 'while :; do :; done' &
  burners+=($!)
done
bash -c 'while :; do /bin/true; done' &
burners+=($!)
echo "load: $((2 * cores)) spinners and a fork loop on $cores cores; $repetitions repetitions of the accuracy tests"

start=$SECONDS
for ((rep = 1; rep <= repetitions; ++rep)); do
  if ! out=$("$test_e2e" --gtest_filter="$filter" --gtest_brief=1 2>&1); then
    echo "$out"
    echo "load: repetition $rep of $repetitions FAILED after $((SECONDS - start)) s"
    exit 1
  fi
  echo "load: repetition $rep passed ($((SECONDS - start)) s)"
done
echo "load: all $repetitions repetitions passed in $((SECONDS - start)) s"
