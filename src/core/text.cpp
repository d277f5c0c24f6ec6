#include "core/text.hpp"

#include <fmt/format.h>

namespace wattwise {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at text[i], or 0 when the bytes there are not one. On 0,
// `*invalid_length` is the length of the maximal invalid subpart (at least 1) that one U+FFFD replaces.
std::size_t sequence_length(std::string_view text, std::size_t i, std::size_t* invalid_length) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range allowed for the first continuation byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    *invalid_length = 1;
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    const bool in_range = i + k < text.size() && (k == 1 ? byte(i + k) >= low && byte(i + k) <= high
                                                         : byte(i + k) >= 0x80 && byte(i + k) <= 0xBF);
    if (!in_range) {
      *invalid_length = k;
      return 0;
    }
  }
  return length;
}

char32_t decode(std::string_view sequence) {
  const auto byte = [&](std::size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(sequence[k]));
  };
  switch (sequence.size()) {
    case 1:
      return byte(0);
    case 2:
      return (byte(0) & 0x1F) << 6 | (byte(1) & 0x3F);
    case 3:
      return (byte(0) & 0x0F) << 12 | (byte(1) & 0x3F) << 6 | (byte(2) & 0x3F);
    default:
      return (byte(0) & 0x07) << 18 | (byte(1) & 0x3F) << 12 | (byte(2) & 0x3F) << 6 | (byte(3) & 0x3F);
  }
}

bool shown_escaped(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) ||  // C0, DEL, C1 (0x9B is a one-byte CSI)
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||  // bidi embeddings, isolates
         c == 0x200E || c == 0x200F || c == 0x061C;                       // direction marks
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    std::size_t invalid = 0;
    const std::size_t length = sequence_length(text, i, &invalid);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t invalid = 0;
    const std::size_t length = sequence_length(text, i, &invalid);
    if (length == 0) {
      out += kReplacement;
      i += invalid;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

void make_valid_utf8(std::string& text) {
  if (!is_valid_utf8(text)) text = valid_utf8(text);
}

std::string for_terminal(std::string_view raw) {
  const std::string text = valid_utf8(raw);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t invalid = 0;
    const std::size_t length = sequence_length(text, i, &invalid);  // never 0: text is valid
    const char32_t c = decode(std::string_view(text).substr(i, length));
    if (!shown_escaped(c)) {
      out.append(text, i, length);
    } else if (c == 0x1B) {
      out += "\\e";
    } else if (c < 0x80) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    } else {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    }
    i += length;
  }
  return out;
}

}  // namespace wattwise
