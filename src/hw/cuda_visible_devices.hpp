#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// CUDA_VISIBLE_DEVICES read the way the CUDA runtime reads it, and resolved against the GPUs NVML lists.
// Pure (no NVML, no environment): the caller passes the variable's value and the GPUs' identities.
//
// The forms CUDA accepts, comma separated:
//   2                        an index (CUDA's numbering: see CUDA_DEVICE_ORDER below)
//   GPU-8932f937-d72c-...    a GPU's UUID, or any prefix of it that names one GPU only
//   MIG-GPU-<uuid>/<gi>/<ci> a MIG instance on that GPU (drivers before R470)
//   MIG-<uuid>               a MIG device's own UUID (R470 and later)
// The first entry that is malformed, names no GPU, is ambiguous or repeats an earlier GPU ends the list:
// CUDA sees only the GPUs before it. An empty value means the job sees no GPU at all.
namespace wattwise::hw {

enum class VisibleForm { kIndex, kGpuUuid, kMigInstance, kMigUuid };

// One entry as written, before it is matched to a GPU.
struct VisibleEntry {
  std::string text;  // as written, spaces trimmed
  VisibleForm form = VisibleForm::kIndex;
  unsigned index = 0;             // kIndex
  std::string uuid;               // kGpuUuid, kMigInstance: "GPU-..." (maybe a prefix); kMigUuid: "MIG-..."
  unsigned gpu_instance = 0;      // kMigInstance
  unsigned compute_instance = 0;  // kMigInstance
};

// The well-formed entries up to the first malformed one; `stopped_at` is that one (as written), if any.
struct ParsedVisibleDevices {
  std::vector<VisibleEntry> entries;
  std::optional<std::string> stopped_at;
};

ParsedVisibleDevices parse_cuda_visible_devices(std::string_view value);

// What the resolver knows of one GPU: NVML's index, its UUID and the UUIDs of its MIG devices (if any).
struct VisibleCandidate {
  unsigned index = 0;
  std::string uuid;
  std::vector<std::string> mig_uuids;
};

// One GPU the job sees, in CUDA's order.
struct VisibleGpu {
  std::size_t position = 0;  // into the candidates
  std::string entry;         // the entry that named it
  bool mig = false;          // named through a MIG device: its energy is the whole GPU's
};

struct ResolvedVisibleDevices {
  std::vector<VisibleGpu> gpus;
  std::optional<std::string> stopped_at;  // the entry that ended the list, if one did
  std::string stop_reason;                // why, for people ("names no GPU", "is ambiguous", ...)
  bool uses_indices = false;              // an index was used: CUDA's numbering must agree with NVML's
};

// Matches the entries against the GPUs. MIG devices map to their parent GPU (once, however many of its
// instances are named).
ResolvedVisibleDevices resolve_cuda_visible_devices(std::string_view value,
                                                    const std::vector<VisibleCandidate>& candidates);

// CUDA numbers GPUs "fastest first" unless CUDA_DEVICE_ORDER=PCI_BUS_ID; NVML in PCI bus order. The two agree
// when every GPU is the same model (ties go by PCI bus id). A warning for people when indices were used on a
// node of mixed models without PCI_BUS_ID, else nothing.
std::optional<std::string> device_order_warning(const ResolvedVisibleDevices& resolved,
                                                std::optional<std::string_view> cuda_device_order,
                                                const std::vector<std::string>& gpu_names);

}  // namespace wattwise::hw
