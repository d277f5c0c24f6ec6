#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "report/html/report_parts.hpp"

namespace wattwise::report::html {

namespace {

// The settings that vary only `knob`, all others held at the reference's values: the slice of knob space a
// curve against `knob` is meaningful on.
std::vector<std::size_t> slice_through_reference(const ReportModel& model, const std::string& knob) {
  const auto& ref = model.settings.at(model.reference_index).setting;
  std::vector<std::size_t> slice;
  for (std::size_t i = 0; i < model.settings.size(); ++i) {
    const auto& s = model.settings[i].setting;
    if (!s.contains(knob)) continue;
    analysis::Setting others = s;
    others.erase(knob);
    analysis::Setting ref_others = ref;
    ref_others.erase(knob);
    if (analysis::same_setting(others, ref_others)) slice.push_back(i);
  }
  std::sort(slice.begin(), slice.end(), [&](std::size_t a, std::size_t b) {
    return model.settings[a].setting.at(knob) < model.settings[b].setting.at(knob);
  });
  return slice;
}

// The results' pick for `metric` (a recommendation's name: "E", "EDP", "time") when it lies on the slice.
std::optional<double> recommended_on_slice(const ReportModel& model, const std::vector<std::size_t>& slice,
                                           const std::string& knob, const std::string& metric) {
  for (const auto& r : model.recommendations)
    if (r.metric.name() == metric && std::find(slice.begin(), slice.end(), r.setting_index) != slice.end())
      return model.settings[r.setting_index].setting.at(knob);
  return std::nullopt;
}

}  // namespace

void fill_fits(ReportModel& model) {
  model.fits.clear();
  if (model.settings.empty()) return;
  for (const auto& knob : model.knobs) {
    const auto slice = slice_through_reference(model, knob);
    std::set<double> distinct;
    for (auto i : slice) distinct.insert(model.settings[i].setting.at(knob));
    if (distinct.size() < 3) continue;  // a quadratic through fewer points says nothing
    for (const std::string metric : {"E", "t", "EDP"}) {
      KnobFit f;
      f.knob = knob;
      f.metric = metric;
      for (auto i : slice) {
        f.xs.push_back(model.settings[i].setting.at(knob));
        f.ys.push_back(model.settings[i].normalised.at(metric).value);
      }
      f.fit = analysis::fit_quadratic(f.xs, f.ys);
      const auto best = std::min_element(f.ys.begin(), f.ys.end()) - f.ys.begin();
      f.measured_optimum_x = f.xs[best];
      f.measured_optimum_y = f.ys[best];
      f.recommended_x = recommended_on_slice(model, slice, knob, metric == "t" ? "time" : metric);
      model.fits.push_back(std::move(f));
    }
  }
}

}  // namespace wattwise::report::html
