#pragma once

#include <string>

#include "analysis/analysis.hpp"

namespace wattwise::report {

// `wattwise analyze` for people: every setting with its spread and its metrics against the reference, the
// Pareto front marked, then the best setting per metric and whether its gain is larger than the noise.
std::string analysis_text(const analysis::Analysis& a);

// The headline in a few lines (`analyze`, the sweep's closing lines): the pick within the slowdown limit
// with its energy and time against the reference, "keep the current setting" when it is not
// distinguishable from the reference, the pick without the limit beside it, and where the fitted optimum
// may lie beyond the range measured.
std::string headline_text(const analysis::Analysis& a);

}  // namespace wattwise::report
