#pragma once

// The invariants every measurement is checked against, and the fallback when one breaks.
//
// For each GPU:
//   alignment-scale    the fine trace's scale against the counter (sampling/alignment.hpp) lies within
//                      [kMinAlignmentScale, kMaxAlignmentScale]: the counter and the 20 ms samples (or the
//                      instantaneous power) read the same sensor, and on the H100 traces of docs/evidence they
//                      agree to 1-3% (docs/evidence/energy-checks.md). A scale outside says the alignment
//                      found a shift that is no physical fit (a sampler starved of CPU left it three counter
//                      intervals: scale 5.0, shared/fixtures/idle-gpu-scale5);
//   counter-brackets   the GPU's energy over the job lies within the counter's increase between the reads
//                      that bracket the job, inner and outer, widened by one posting period at the GPU's
//                      highest power limit (sampling::CounterBrackets);
//   power-limit        the average power over the job is no more than the GPU's highest power limit;
//   peak-power         ... and no more than the peak of the fine trace (scaled by kMaxAlignmentScale, as the
//                      samples may read that much low);
//   phases-within-gpu  a phase name's occurrences on a GPU, where they do not overlap, sum to no more than the
//                      GPU's energy over their span (within that span's bar).
// A GPU that breaks one is accounted again from the counter alone, read by read
// (sampling::EnergyAccounting::counter_only, which always lies within the brackets): every one of its
// figures, total and phases. The failure is said on stderr and in the JSON (`checks`); the impossible
// number is never reported.

#include <string>
#include <vector>

#include "measure/measurement.hpp"
#include "sampling/energy_accounting.hpp"

namespace wattwise::measure {

// From the H100 traces (docs/evidence/energy-checks.md): the scale ranged over 0.97-1.03 on every trace
// and every replayed read schedule; the bound leaves a wide margin for other GPUs' sensors.
inline constexpr double kMinAlignmentScale = 0.8;
inline constexpr double kMaxAlignmentScale = 1.25;
// The average may exceed the limit by this much before it is called impossible: the limit is enforced
// over about a second and the job's edges are uncertain to a posting.
inline constexpr double kPowerLimitSlack = 1.02;

// Attributes energy to m's GPUs and phases from its traces (as attribute_energy), checks every invariant
// above, and accounts the GPUs that broke one from their counter alone; m.checks says what ran and what
// failed. With `judge_starvation` (a real time line: a simulated sampler is never late) it also fills the
// GPUs' starvation fields (late counter reads, a posting grid learnt only after the job or never).
// Returns one line per failure and per starved GPU, for stderr.
std::vector<std::string> account_checked(Measurement& m, bool judge_starvation);

// The checks alone, over figures already attributed (attribute_energy), with the traces' accountants.
std::vector<EnergyCheckFailure> check_energy(const Measurement& m,
                                             const std::vector<sampling::EnergyAccounting>& accountants);

// The names of the checks, in the order they run.
std::vector<std::string> energy_check_names();

}  // namespace wattwise::measure
