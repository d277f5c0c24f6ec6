#include "workload/marker_codec.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/numbers.hpp"
#include "core/text.hpp"

namespace wattwise::workload {
namespace {

bool needs_escape(unsigned char c) {
  return c <= 0x20 || c == '=' || c == '%' || c == 0x7f;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<std::string_view> split_on_spaces(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (start <= text.size()) {
    size_t space = text.find(' ', start);
    if (space == std::string_view::npos) space = text.size();
    fields.push_back(text.substr(start, space - start));
    start = space + 1;
  }
  return fields;
}

// Shortest text that reads back as the same double: counters such as samples=128 stay readable.
std::string format_number(double value) {
  char buffer[32];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (parse_number(buffer) == value) break;
  }
  return buffer;
}

std::optional<Marker> fail(std::string* error_reason, std::string reason) {
  if (error_reason) *error_reason = std::move(reason);
  return std::nullopt;
}

}  // namespace

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (needs_escape(c)) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;  // a '%' needs two hex digits after it
    int high = hex_value(text[i + 1]);
    int low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

std::string encode_marker(const Marker& marker) {
  static constexpr char kKindLetters[] = {'B', 'E', 'P'};
  std::string out(kMarkerVersionTag);
  out += ' ';
  out += kKindLetters[static_cast<int>(marker.kind)];
  out += ' ';
  out += std::to_string(marker.t.count());
  out += ' ';
  out += percent_encode(marker.name);
  out += " pid=" + std::to_string(marker.pid);
  if (marker.rank) out += " rank=" + std::to_string(*marker.rank);
  if (marker.dropped_before)
    out += std::string(" ") + std::string(kDroppedKey) + "=" + std::to_string(*marker.dropped_before);
  for (const auto& [key, value] : marker.counters) {
    out += ' ';
    out += percent_encode(key);
    out += '=';
    out += format_number(value);
  }
  return out;
}

std::optional<Marker> decode_marker(std::string_view message, std::string* error_reason) {
  // A trailing newline is tolerated: people test the socket with `echo ... | socat`.
  if (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  std::vector<std::string_view> fields = split_on_spaces(message);
  if (fields.size() < 4) return fail(error_reason, "fewer than 4 fields (want: ww1 KIND NS NAME)");
  if (fields[0] != kMarkerVersionTag) {
    return fail(error_reason, "unknown version tag '" + std::string(fields[0]) + "'");
  }

  Marker marker;
  if (fields[1] == "B") {
    marker.kind = MarkerKind::kBegin;
  } else if (fields[1] == "E") {
    marker.kind = MarkerKind::kEnd;
  } else if (fields[1] == "P") {
    marker.kind = MarkerKind::kPoint;
  } else {
    return fail(error_reason, "unknown kind '" + std::string(fields[1]) + "'");
  }

  auto t_ns = parse_integer<long long>(fields[2]);
  if (!t_ns || *t_ns < 0 || *t_ns > kMaxMarkerTimeNs)
    return fail(error_reason, "bad timestamp '" + std::string(fields[2]) + "'");
  marker.t = Nanos{*t_ns};

  auto name = percent_decode(fields[3]);
  if (!name || name->empty()) return fail(error_reason, "empty or badly encoded name");
  marker.name = valid_utf8(*name);  // any bytes may arrive; JSON, HTML and terminals need valid UTF-8

  for (size_t i = 4; i < fields.size(); ++i) {
    std::string_view field = fields[i];
    size_t equals = field.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      return fail(error_reason, "counter '" + std::string(field) + "' is not key=number");
    }
    std::string_view raw_key = field.substr(0, equals);
    std::string_view raw_value = field.substr(equals + 1);
    if (raw_key == "pid") {
      auto pid = parse_integer<int>(raw_value);
      if (!pid) return fail(error_reason, "bad pid '" + std::string(raw_value) + "'");
      marker.pid = *pid;
      continue;
    }
    if (raw_key == kDroppedKey) {
      auto dropped = parse_integer<long long>(raw_value);
      if (!dropped || *dropped < 0)
        return fail(error_reason, "bad " + std::string(kDroppedKey) + " '" + std::string(raw_value) + "'");
      marker.dropped_before = *dropped;
      continue;
    }
    if (raw_key == "rank") {
      auto rank = parse_integer<int>(raw_value);
      if (!rank) return fail(error_reason, "bad rank '" + std::string(raw_value) + "'");
      marker.rank = *rank;
      continue;
    }
    auto key = percent_decode(raw_key);
    auto value = parse_number(raw_value);
    if (!key || key->empty() || !value) {
      return fail(error_reason, "counter '" + std::string(field) + "' is not key=number");
    }
    marker.counters[valid_utf8(*key)] = *value;
  }
  return marker;
}

}  // namespace wattwise::workload
