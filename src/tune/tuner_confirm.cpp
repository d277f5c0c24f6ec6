// The confirmation: the search's choice measured once more right after the start value (and, when close to
// it, compared with the start value measured after it too) before it is held; and the settle.

#include <fmt/format.h>
#include <cmath>

#include "tune/tuner_state.hpp"

namespace wattwise::tune {

namespace {

// A confirmation that beats the start value by less than this (relative) is checked against the start value
// measured after it too: the start's level extrapolated over the confirmation may have drifted that much.
constexpr double kConfirmDriftAllowance = 0.02;

}  // namespace

std::optional<Decision> Tuner::State::end_confirm(const ProbeEstimate&) {
  const std::size_t chosen = *confirming;
  confirming.reset();
  const double at_s = (probe_began_s + clock_s) / 2;
  const auto e = against_start(*probe, at_s);
  const double start = start_score(level_at(at_s));
  // Over the budget only if clearly so: the search found its time within the budget, and a candidate at the
  // budget's edge (where the best one under a budget sits) is as likely to measure a little over as under.
  const bool over_budget =
      e && config.max_slowdown &&
      e->mean_time_s - e->time_half_s > judged_budget_time_s();
  if (e && !over_budget && e->high() < start - kConfirmDriftAllowance * std::abs(start)) {
    held_start = false;
    return settle(chosen, *e,
                  fmt::format("{} again: {:.3f} [{:.3f}, {:.3f}] of the start value measured just before: "
                              "confirmed",
                              value_text(chosen), e->score, e->low(), e->high()));
  }
  if (e && !over_budget && e->high() < start) {
    // Close to the start value: measured once more after it, so that the start's level at its time is
    // known from both sides rather than extrapolated.
    confirmation = Measured{chosen, *probe, at_s};
    Decision d =
        decision(DecisionKind::kProbe, grid[start_index], *e,
                 fmt::format("{} again: {:.3f} [{:.3f}, {:.3f}] of the start value measured just before, "
                             "close to it: the start value once more, after it",
                             value_text(chosen), e->score, e->low(), e->high()));
    phase = Phase::kConfirmCheck;
    hold(start_index);
    return d;
  }
  if (over_budget && e->high() < start) {
    // It beats the start value but its time is now clearly over the budget: the budget's edge lies above it.
    // The next choice within the budget is confirmed in its place; holding the start value would give up
    // what every setting between them was measured to save.
    search->record_infeasible(chosen);
    const auto next = search->choice();
    const auto measured = next ? search->estimates().find(*next) : search->estimates().end();
    if (next && *next != start_index &&
        (measured == search->estimates().end() || measured->second.high() < start)) {
      confirming = *next;
      Decision d =
          decision(DecisionKind::kProbe, grid[*next], *e,
                   fmt::format("{} again: {:.3f} [{:.3f}, {:.3f}] of the start value measured just "
                               "before, over the budget: {} is confirmed next to the start value instead",
                               value_text(chosen), e->score, e->low(), e->high(), value_text(*next)));
      hold(*next);
      return d;
    }
  }
  return settle_on_start(e.value_or(probe->no_estimate()), value_text(chosen) + " again",
                         over_budget ? "measured just before, over the budget" : "measured just before");
}

std::optional<Decision> Tuner::State::end_confirm_check(const ProbeEstimate& e) {
  keep_start_measurement(e);
  const Measured c = std::move(*confirmation);
  confirmation.reset();
  const auto again = against_start(c.probe, c.at_s);
  const double start = start_score(level_at(c.at_s));
  if (again && again->high() < start) {
    held_start = false;
    return settle(c.index, *again,
                  fmt::format("{}: {:.3f} [{:.3f}, {:.3f}] of the start value measured before and after it: "
                              "confirmed",
                              value_text(c.index), again->score, again->low(), again->high()));
  }
  return settle_on_start(again.value_or(c.probe.no_estimate()), value_text(c.index),
                         "measured before and after it");
}

Decision Tuner::State::settle_on_start(const ProbeEstimate& shown, const std::string& choice,
                                       const std::string& measured) {
  held_start = true;
  return settle(start_index, shown,
                fmt::format("{}: {:.3f} [{:.3f}, {:.3f}] of the start value {}: not confirmed; no setting "
                            "beats the start value within the noise",
                            choice, shown.score, shown.low(), shown.high(), measured));
}

Decision Tuner::State::settle(std::size_t index, const ProbeEstimate& e, std::string reason) {
  // Iterations fed elsewhere during this search are its cost.
  for (std::size_t i = 0; i < fed_at.size(); ++i)
    if (i != index) profiling += fed_at[i];
  reason += fmt::format("; settled at {}", value_text(index));
  // Under a budget, the held setting's slowdown as last measured, with its interval, and how the budget was
  // judged: a setting whose time is estimated within budget_tolerance of it counts as within it.
  if (config.max_slowdown && index != start_index && e.iterations > 0)
    reason += fmt::format("{} against the {:g}% budget, kept to within {:g}% of its time", slowdown_text(e),
                          100 * *config.max_slowdown, 100 * config.budget_tolerance);
  Decision d = decision(DecisionKind::kSettle, grid[index], e, std::move(reason));
  phase = Phase::kSettled;
  settled_value = grid[index];
  hold(index);
  probe.reset();
  drift_reference.emplace(grid[index]);
  return d;
}

}  // namespace wattwise::tune
