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

// How slowdown_caveat words it: a line under the terminal's headline, or a sentence of the HTML report's box.
enum class CaveatStyle { kHeadlineLine, kBoxSentence };

// What the headline says of its pick's slowdown against the limit, where there is something to say (empty
// otherwise): its 95% interval reaches past the limit (and where that interval borrowed the time spread of
// the settings run more than once, that too), or it has no interval at all, no setting having been run twice.
// One text for the closing lines, `analyze` and the HTML box, so that they say the same; without the line's
// indent and end or the sentence's full stop, which each caller adds.
std::string slowdown_caveat(const analysis::Headline& h, CaveatStyle style);

// Where the headline's pick qualified on the time curve while its own runs' mean is over the limit
// (analysis::judged_within_on_the_curve_only): both figures, so that the table's +10.4% beside an "at most
// 10% slower" headline is explained; empty otherwise. Worded and ended like slowdown_caveat.
std::string curve_judgement(const analysis::Headline& h, CaveatStyle style);

}  // namespace wattwise::report
