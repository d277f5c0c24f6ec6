#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "workload/marker.hpp"

namespace wattwise::workload {

// The marker wire format, one datagram per marker (docs/markers.md):
//   ww1 <B|E|P> <CLOCK_MONOTONIC ns> <name> [pid=N] [rank=N] [key=number ...]
// The name and the keys are percent-encoded (space, '=', '%' and control characters), so a
// message is always split on single spaces.
inline constexpr std::string_view kMarkerVersionTag = "ww1";
// Timestamps past this (2^62 ns, 146 years of uptime) are rejected: no clock reads them, and time
// arithmetic on them (offsets, differences) would overflow.
inline constexpr long long kMaxMarkerTimeNs = 1LL << 62;
// Reserved like pid and rank: how many markers the sending process had dropped before this one.
inline constexpr std::string_view kDroppedKey = "ww_dropped";

// The bytes to send for `marker` (without a trailing newline).
std::string encode_marker(const Marker& marker);

// Parses one datagram: any bytes (this is the fuzz target's entry point); never throws except
// std::bad_alloc. On failure returns std::nullopt and, when `error_reason` is given, says why (e.g.
// "unknown kind 'X'"); malformed messages are counted by the receiver, never fatal. The name and the
// counter keys come back as valid UTF-8: invalid bytes are replaced with U+FFFD (core/text.hpp).
std::optional<Marker> decode_marker(std::string_view message, std::string* error_reason = nullptr);

// Percent-encoding used for names and keys; exposed for the clients' tests.
std::string percent_encode(std::string_view text);
std::optional<std::string> percent_decode(std::string_view text);

}  // namespace wattwise::workload
