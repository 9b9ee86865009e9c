#pragma once
// UTF-8 well-formedness, shared by corpus cleaning (repair) and BLEU scoring (validation).

#include <cstddef>
#include <string_view>

namespace nmt {

// Length of the well-formed UTF-8 sequence starting at text[i] (Unicode table 3-7, which is also
// what Python's strict codec enforces: no overlongs, surrogates or code points above U+10FFFF),
// or 0 when it is ill-formed or truncated.
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
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
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return length;
}

// Bytes of `text` that are part of no well-formed UTF-8 sequence (0 when it is valid UTF-8): what
// corpus cleaning's repair turns into one U+FFFD each.
inline std::size_t utf8_invalid_bytes(std::string_view text) {
  std::size_t invalid = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) ++invalid;
    i += length == 0 ? 1 : length;
  }
  return invalid;
}

}  // namespace nmt
