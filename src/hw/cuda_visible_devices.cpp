#include "hw/cuda_visible_devices.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "core/numbers.hpp"

namespace wattwise::hw {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<unsigned> whole_number(std::string_view s) {
  return parse_integer<unsigned>(s);
}

// "MIG-GPU-<uuid>/<gi>/<ci>": the parent's UUID and the two instance ids.
std::optional<VisibleEntry> parse_mig_instance(std::string_view text) {
  const std::string_view rest = text.substr(4);  // after "MIG-"
  const auto slash2 = rest.rfind('/');
  if (slash2 == std::string_view::npos || slash2 == 0) return std::nullopt;
  const auto slash1 = rest.rfind('/', slash2 - 1);
  if (slash1 == std::string_view::npos) return std::nullopt;
  const auto gi = whole_number(rest.substr(slash1 + 1, slash2 - slash1 - 1));
  const auto ci = whole_number(rest.substr(slash2 + 1));
  const std::string_view uuid = rest.substr(0, slash1);
  if (!gi || !ci || uuid.size() <= 4) return std::nullopt;
  VisibleEntry e;
  e.text = std::string(text);
  e.form = VisibleForm::kMigInstance;
  e.uuid = std::string(uuid);
  e.gpu_instance = *gi;
  e.compute_instance = *ci;
  return e;
}

std::optional<VisibleEntry> parse_entry(std::string_view text) {
  VisibleEntry e;
  e.text = std::string(text);
  if (text.starts_with("MIG-GPU-")) return parse_mig_instance(text);
  if (text.starts_with("MIG-")) {
    if (text.size() <= 4) return std::nullopt;
    e.form = VisibleForm::kMigUuid;
    e.uuid = e.text;
    return e;
  }
  if (text.starts_with("GPU-")) {
    if (text.size() <= 4) return std::nullopt;
    e.form = VisibleForm::kGpuUuid;
    e.uuid = e.text;
    return e;
  }
  // CUDA reads a leading integer; a sign or anything after the digits makes the entry invalid.
  const auto index = whole_number(text);
  if (!index) return std::nullopt;
  e.form = VisibleForm::kIndex;
  e.index = *index;
  return e;
}

// Candidates whose UUID (or one of whose MIG UUIDs) starts with `prefix`; several: ambiguous.
std::vector<std::size_t> matching(const std::vector<VisibleCandidate>& candidates, const std::string& prefix,
                                  bool mig_uuid) {
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    if (!mig_uuid && c.uuid.starts_with(prefix)) found.push_back(i);
    if (mig_uuid) {
      const auto n = std::count_if(c.mig_uuids.begin(), c.mig_uuids.end(),
                                   [&](const std::string& m) { return m.starts_with(prefix); });
      for (long k = 0; k < n; ++k) found.push_back(i);  // two MIG devices match: ambiguous too
    }
  }
  return found;
}

// The candidate one entry names, or why it names none.
struct Match {
  std::optional<std::size_t> position;
  std::string problem;
};

Match match_entry(const VisibleEntry& e, const std::vector<VisibleCandidate>& candidates) {
  if (e.form == VisibleForm::kIndex) {
    for (std::size_t i = 0; i < candidates.size(); ++i)
      if (candidates[i].index == e.index) return {i, ""};
    return {std::nullopt, "names no GPU"};
  }
  const auto found = matching(candidates, e.uuid, e.form == VisibleForm::kMigUuid);
  if (found.size() > 1) return {std::nullopt, "matches more than one GPU (give more of the UUID)"};
  if (found.empty())
    return {std::nullopt,
            e.form == VisibleForm::kMigUuid ? "names no MIG device this driver lists" : "names no GPU"};
  return {found.front(), ""};
}

}  // namespace

ParsedVisibleDevices parse_cuda_visible_devices(std::string_view value) {
  ParsedVisibleDevices parsed;
  if (trim(value).empty()) return parsed;  // set but empty: the job sees no GPU
  std::size_t begin = 0;
  while (begin <= value.size()) {
    auto end = value.find(',', begin);
    if (end == std::string_view::npos) end = value.size();
    const std::string_view item = trim(value.substr(begin, end - begin));
    auto entry = parse_entry(item);
    if (!entry) {
      parsed.stopped_at = std::string(item);
      return parsed;
    }
    parsed.entries.push_back(std::move(*entry));
    begin = end + 1;
  }
  return parsed;
}

ResolvedVisibleDevices resolve_cuda_visible_devices(std::string_view value,
                                                    const std::vector<VisibleCandidate>& candidates) {
  ResolvedVisibleDevices resolved;
  const ParsedVisibleDevices parsed = parse_cuda_visible_devices(value);
  for (const auto& e : parsed.entries) {
    const Match match = match_entry(e, candidates);
    const bool mig = e.form == VisibleForm::kMigInstance || e.form == VisibleForm::kMigUuid;
    auto seen = std::find_if(resolved.gpus.begin(), resolved.gpus.end(), [&](const VisibleGpu& g) {
      return match.position && g.position == *match.position;
    });
    std::string problem = match.problem;
    // A GPU named twice ends the list for CUDA; several MIG devices of one GPU are one GPU's energy for us.
    if (seen != resolved.gpus.end() && !(mig && seen->mig)) problem = "repeats an earlier GPU";
    if (!problem.empty()) {
      resolved.stopped_at = e.text;
      resolved.stop_reason = problem;
      return resolved;
    }
    resolved.uses_indices = resolved.uses_indices || e.form == VisibleForm::kIndex;
    if (seen == resolved.gpus.end()) resolved.gpus.push_back({*match.position, e.text, mig});
  }
  if (parsed.stopped_at) {
    resolved.stopped_at = parsed.stopped_at;
    resolved.stop_reason = "is not an index, GPU-<uuid>, MIG-GPU-<uuid>/<gi>/<ci> or MIG-<uuid>";
  }
  return resolved;
}

std::optional<std::string> device_order_warning(const ResolvedVisibleDevices& resolved,
                                                std::optional<std::string_view> cuda_device_order,
                                                const std::vector<std::string>& gpu_names) {
  if (!resolved.uses_indices) return std::nullopt;
  if (cuda_device_order && *cuda_device_order == "PCI_BUS_ID") return std::nullopt;
  const bool mixed =
      std::adjacent_find(gpu_names.begin(), gpu_names.end(), std::not_equal_to<>()) != gpu_names.end();
  if (!mixed) return std::nullopt;
  return fmt::format(
      "CUDA_VISIBLE_DEVICES uses indices on a node with different GPU models and CUDA_DEVICE_ORDER is not "
      "PCI_BUS_ID: CUDA may number the GPUs fastest first while NVML (and wattwise) number them in PCI bus "
      "order, so the job may run on other GPUs than those measured; set CUDA_DEVICE_ORDER=PCI_BUS_ID or use "
      "GPU UUIDs");
}

}  // namespace wattwise::hw
