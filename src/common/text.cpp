#include "common/text.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace strata {

namespace {

// Length of the valid UTF-8 sequence starting at text[i] (2 to 4), or 0 when it is not one.
size_t utf8_sequence_bytes(std::string_view text, size_t i) {
  const auto byte = [&](size_t j) { return static_cast<uint8_t>(text[j]); };
  const uint8_t lead = byte(i);
  size_t length = 0;
  uint32_t code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07u;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t j = 1; j < length; ++j) {
    if ((byte(i + j) & 0xC0u) != 0x80u) return 0;
    code = (code << 6) | (byte(i + j) & 0x3Fu);
  }
  const uint32_t min_code = length == 2 ? 0x80u : length == 3 ? 0x800u : 0x10000u;
  if (code < min_code || code > 0x10FFFFu || (code >= 0xD800u && code <= 0xDFFFu)) return 0;
  if (code >= 0x80u && code <= 0x9Fu) return 0;  // C1 controls: escaped like C0
  return length;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      if (c == '\\') out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (const size_t n = c >= 0x80 ? utf8_sequence_bytes(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else
      out += fmt::format("\\x{:02x}", c);
    ++i;
  }
  return out;
}

}  // namespace strata
