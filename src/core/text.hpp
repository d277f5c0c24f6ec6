#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace wattwise {

// Text that enters wattwise from outside (marker names and counter names, labels, knob values, names read
// from a database or CSV, GPU names from NVML) may be any bytes. Everything downstream (JSON, HTML, the
// terminal) assumes valid UTF-8, so text is repaired once, where it enters:
//   valid_utf8    invalid bytes become U+FFFD (one per maximal invalid subsequence, as the Unicode
//                 standard recommends); valid text comes back unchanged.
//   for_terminal  what a printer for people shows: valid_utf8, then C0/C1 control characters, DEL and the
//                 bidirectional overrides written as visible escapes (\e, \x07, \u202e), so a phase name
//                 can neither move the cursor nor recolour or hide the output.
// HTML has its own escaping (report/html); JSON needs valid UTF-8 only.

bool is_valid_utf8(std::string_view text);
std::string valid_utf8(std::string_view text);
// Repairs `text` in place; cheap (no copy) when it is already valid.
void make_valid_utf8(std::string& text);
std::string for_terminal(std::string_view text);

// At most max_bytes of `text`, never ending inside a UTF-8 sequence (so valid text stays valid). The NVTX
// injection library keeps a copy of its own (nvtx/range_tracker): it is loaded into the job's process and
// links nothing of ours, core included.
inline std::string cut_utf8(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to the start of the sequence that did not fit.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text;
}

}  // namespace wattwise
