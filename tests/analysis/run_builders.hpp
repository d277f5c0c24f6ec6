#pragma once

#include <vector>

#include "analysis/run_record.hpp"

namespace wattwise::analysis::testing {

// A successful run at one power limit; tests spell out only what they check.
inline RunRecord run_at(double power_limit_w, double energy_j, double time_s, int repeat = 0) {
  RunRecord run;
  run.setting = {{"power_limit_w", power_limit_w}};
  run.energy_j = energy_j;
  run.time_s = time_s;
  run.repeat = repeat;
  return run;
}

// A sharp knee in time (review8, docs/evidence/adaptive-sweep.md "The time curve reviewed"): 100..300 W every
// 5 W, three runs a value 0.1% apart, time flat above 250 W and ~1/P below it, energy falling with the limit.
// 225 W is 11.1% slower than 300 W, 230 W 8.7%: a quadratic through 225 W's neighbours rounds the knee off
// and reads 225 W +10.0%.
inline std::vector<RunRecord> runs_with_a_sharp_knee_at_250_w() {
  std::vector<RunRecord> runs;
  for (double w = 100; w <= 300; w += 5)
    for (int k = 0; k < 3; ++k)
      runs.push_back(run_at(w, 700 + 2 * (w - 100), (w >= 250 ? 100 : 100 * 250 / w) * (1 + 0.001 * (k - 1)), k));
  return runs;
}

}  // namespace wattwise::analysis::testing
