#pragma once

#include <string>

#include "analysis/analysis.hpp"

namespace wattwise::report {

// `wattwise analyze` for people: every setting with its spread and its metrics against the reference, the
// Pareto front marked, then the best setting per metric and whether its gain is larger than the noise.
std::string analysis_text(const analysis::Analysis& a);

}  // namespace wattwise::report
