#include "report/html/report_tune.hpp"

#include "report/html/html_escape.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace wattwise::report::html {
namespace {

constexpr double kWidth = 640;
constexpr double kHeight = 260;
constexpr double kLeft = 64;
constexpr double kRight = 16;
constexpr double kTop = 16;
constexpr double kBottom = 40;

struct Point {
  double x = 0;
  double y = 0;
  double err = 0;  // half-length of the error bar, in y's unit
};

// Linear axis range with a little room, never empty.
std::pair<double, double> span(const std::vector<double>& values) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) return {0, 1};
  const double pad = hi > lo ? 0.08 * (hi - lo) : std::max(1.0, 0.05 * std::fabs(hi));
  return {lo - pad, hi + pad};
}

// One chart: points (and error bars), joined when `steps` (a step line: the setting held until the next).
std::string svg_chart(const std::string& title, const std::vector<Point>& points, const std::string& x_label,
                      const std::string& y_label, bool steps) {
  std::vector<double> xs, ys;
  for (const auto& p : points) {
    xs.push_back(p.x);
    ys.push_back(p.y - p.err);
    ys.push_back(p.y + p.err);
  }
  // Plain variables, not structured bindings: clang 14 (the fuzz and sanitizer builds) cannot capture those.
  const std::pair<double, double> x_span = span(xs), y_span = span(ys);
  const double x0 = x_span.first, x1 = x_span.second, y0 = y_span.first, y1 = y_span.second;
  auto px = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * (kWidth - kLeft - kRight); };
  auto py = [&](double y) { return kHeight - kBottom - (y - y0) / (y1 - y0) * (kHeight - kTop - kBottom); };
  std::string svg = fmt::format(
      "<figure class=\"tune-chart\"><svg role=\"img\" aria-label=\"{0}\" viewBox=\"0 0 {1} {2}\" "
      "width=\"{1}\" height=\"{2}\"><title>{0}</title>\n"
      "<line x1=\"{3}\" y1=\"{4}\" x2=\"{5}\" y2=\"{4}\" stroke=\"#555\"/>"
      "<line x1=\"{3}\" y1=\"{6}\" x2=\"{3}\" y2=\"{4}\" stroke=\"#555\"/>\n",
      escape_html(title), kWidth, kHeight, kLeft, kHeight - kBottom, kWidth - kRight, kTop);
  for (int i = 0; i <= 4; ++i) {
    const double xv = x0 + (x1 - x0) * i / 4, yv = y0 + (y1 - y0) * i / 4;
    svg +=
        fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{:.4g}</text>",
                    px(xv), kHeight - kBottom + 14, xv);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{:.4g}</text>\n",
                       kLeft - 4, py(yv) + 4, yv);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
                     (kLeft + kWidth - kRight) / 2, kHeight - 6, escape_html(x_label));
  svg += fmt::format(
      "<text x=\"12\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 12 {:.1f})\">{}</text>\n",
      (kTop + kHeight - kBottom) / 2, (kTop + kHeight - kBottom) / 2, escape_html(y_label));
  if (steps && !points.empty()) {
    std::string path = fmt::format("M{:.1f},{:.1f}", px(points[0].x), py(points[0].y));
    for (std::size_t i = 1; i < points.size(); ++i)
      path += fmt::format(" H{:.1f} V{:.1f}", px(points[i].x), py(points[i].y));
    path += fmt::format(" H{:.1f}", px(x1));
    svg += fmt::format(
        "<path class=\"tune-steps\" d=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n", path);
  }
  for (const auto& p : points) {
    if (p.err > 0)
      svg +=
          fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#888\"/>",
                      px(p.x), py(p.y - p.err), py(p.y + p.err));
    svg +=
        fmt::format("<circle class=\"tune-point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"#d62728\"/>\n",
                    px(p.x), py(p.y));
  }
  return svg + fmt::format("</svg><figcaption>{}</figcaption></figure>\n", escape_html(title));
}

std::string number(std::optional<double> v, const char* format = "{:.4g}") {
  return v ? fmt::format(fmt::runtime(format), *v) : "n/a";
}

}  // namespace

std::string tune_box_html(const store::TuneTrace& t) {
  const std::string unit = escape_html(t.unit);
  const std::string start = fmt::format("{} {}", number(t.start_value), unit);
  // The tuner says in its last settle why it held the start value (tune/tuner.hpp).
  bool held_start = false;
  for (const auto& d : t.decisions)
    if (d.kind == "settle")
      held_start = d.reason.find("no setting beats the start value") != std::string::npos;
  std::string title, body;
  if (!t.settled_value) {
    title = "Tuning: the search had not ended";
    // A real search changed the setting on the way (its probes); only a dry run left it as captured.
    body = fmt::format(
        "The job ended before the search did ({} profiling iterations so far), so {} {} {}. Tune a longer "
        "job, or narrow the search with <code>--range</code>.",
        t.profiling_iterations, escape_html(t.knob),
        t.dry_run ? "stayed as captured," : "was restored to", start);
  } else if (t.dry_run) {
    const bool passed = *t.settled_value == t.start_value || held_start;
    title = passed ? "Dry run: the A/A test passed" : "Dry run: the A/A test failed";
    body = passed ? fmt::format(
                        "Every candidate ran at the captured {} (a dry run changes nothing), and the "
                        "tuner holds the start value: nothing it measured was mistaken for an effect "
                        "of the setting.",
                        start)
                  : fmt::format(
                        "Every candidate ran at the captured {} (a dry run changes nothing), yet the "
                        "tuner would settle at {} {}: what it took for an effect was drift or noise. "
                        "Do not act on it.",
                        start, number(t.settled_value), unit);
  } else if (held_start) {
    // The start value the tuner held is the search's (settled_value): the captured one unless --range left
    // it out, when it is the range's nearest end, applied before the first iteration.
    const std::string kept = fmt::format("{} {}", number(t.settled_value), unit);
    title = fmt::format("Tuning: keep {}", kept);
    body = fmt::format(
        "No setting beats the start value within the noise: the tuner kept {} after {} "
        "profiling iterations{}.",
        kept, t.profiling_iterations,
        *t.settled_value == t.start_value
            ? std::string()
            : fmt::format(" (the start of its search: captured {}, outside --range; restored to it when the "
                          "job ended)",
                          start));
  } else {
    title = fmt::format("Tuning: settled at {} {}", number(t.settled_value), unit);
    body = fmt::format(
        "The tuner settled {} at {} {} (captured {}) after {} profiling iterations and held it "
        "for the rest of the job; it was restored to {} when the job ended.",
        escape_html(t.knob), number(t.settled_value), unit, start, t.profiling_iterations, start);
  }
  return fmt::format(
      "<section id=\"recommendation\" class=\"recommendation tune\"><h2>{}</h2>\n<p>{} The Tuning section "
      "below has every decision with its estimate and interval.</p>\n</section>\n",
      title, body);
}

std::string tune_section_html(const store::TuneTrace& t) {
  const std::string setting_label = fmt::format("{} ({})", t.knob, t.unit);
  std::string html = fmt::format(
      "<p>Tuned {} for metric {}{}: captured {} {}, {}; {} iterations, {} profiling iterations.</p>\n",
      escape_html(t.knob), escape_html(t.metric), t.dry_run ? " (dry run: no setting was changed)" : "",
      number(t.start_value), escape_html(t.unit),
      t.settled_value ? fmt::format("settled at {} {}", number(t.settled_value), escape_html(t.unit))
                      : std::string("not settled"),
      t.iterations, t.profiling_iterations);
  std::vector<Point> energy, time;
  for (const auto& s : t.settings) {
    if (s.energy_j_mean) energy.push_back({s.value, *s.energy_j_mean, s.energy_j_std.value_or(0)});
    time.push_back({s.value, s.time_s_mean * 1000, s.time_s_std * 1000});
  }
  if (!energy.empty())
    html += svg_chart("Energy per iteration against the setting (mean, bars one standard deviation)", energy,
                      setting_label, "energy per iteration (J)", false);
  if (!time.empty())
    html += svg_chart("Time per iteration against the setting (mean, bars one standard deviation)", time,
                      setting_label, "time per iteration (ms)", false);
  std::vector<Point> over_time = {{0, t.start_value, 0}};
  for (const auto& c : t.changes) over_time.push_back({c.at_s, c.value, 0});
  html += svg_chart(t.dry_run ? "The setting over the job's time (as it would have been)"
                              : "The setting over the job's time",
                    over_time, "time since the job's start (s)", setting_label, true);
  // As it happened, left to right: the setting measured, its estimate, then the setting held from the
  // decision on (the estimate is not of that one). A trace stored before schema version 9 does not say which
  // setting its estimates are of: "?".
  html += fmt::format(
      "<table class=\"tune-decisions\"><thead><tr><th>decision</th><th>at iteration</th><th>{}</th>"
      "<th>estimate</th><th>interval</th><th>iterations</th><th>{}</th><th>reason</th></tr></thead><tbody>\n",
      t.dry_run ? "measured as" : "measured", t.dry_run ? "then would hold" : "then holds");
  for (const auto& d : t.decisions)
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td><td>[{:.3f}, {:.3f}]</td><td>{}</td>"
        "<td>{:.4g} {}</td><td>{}</td></tr>\n",
        escape_html(d.kind), d.at_iteration,
        d.estimate_of ? fmt::format("{:.4g} {}", *d.estimate_of, escape_html(t.unit)) : std::string("?"),
        d.estimate, d.interval_low, d.interval_high, d.iterations, d.value, escape_html(t.unit),
        escape_html(d.reason));
  return html + "</tbody></table>\n";
}

}  // namespace wattwise::report::html
