#pragma once

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

}  // namespace wattwise::analysis::testing
