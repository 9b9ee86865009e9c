// Python 3.11 str semantics in C++ (see python_str.h); the lowercase tables are generated from
// Python 3.11's unicodedata (Unicode 14.0).

#include "eval/metrics/python_str.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>

#include "common/utf8.h"

namespace nmt::eval {
namespace {

unsigned char byte_at(std::string_view text, std::size_t i) {
  return static_cast<unsigned char>(text[i]);
}

// Decodes the code point at text[i] of already validated UTF-8; `length` receives its size.
char32_t code_point_at(std::string_view text, std::size_t i, std::size_t& length) {
  const unsigned char lead = byte_at(text, i);
  length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  length = std::min(length, text.size() - i);
  if (length == 1) return lead;
  char32_t c = lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) c = (c << 6) | (byte_at(text, i + k) & 0x3F);
  return c;
}

// ---- str.lower() tables, generated from Python 3.11's unicodedata (Unicode 14.0) ------------

// Runs of single-code-point lowercase mappings: `count` code points first, first + stride, ...
// each mapping to itself + delta. 181 runs cover all 1432 mappings.
struct LowerRun {
  std::uint32_t first;
  std::uint32_t count;
  std::int32_t delta;
  std::uint32_t stride;
};
constexpr LowerRun kLowerRuns[] = {
    {0x41, 26, 32, 1},      {0xC0, 23, 32, 1},      {0xD8, 7, 32, 1},       {0x100, 24, 1, 2},
    {0x132, 3, 1, 2},       {0x139, 8, 1, 2},       {0x14A, 23, 1, 2},      {0x178, 1, -121, 1},
    {0x179, 3, 1, 2},       {0x181, 1, 210, 1},     {0x182, 2, 1, 2},       {0x186, 1, 206, 1},
    {0x187, 1, 1, 1},       {0x189, 2, 205, 1},     {0x18B, 1, 1, 1},       {0x18E, 1, 79, 1},
    {0x18F, 1, 202, 1},     {0x190, 1, 203, 1},     {0x191, 1, 1, 1},       {0x193, 1, 205, 1},
    {0x194, 1, 207, 1},     {0x196, 1, 211, 1},     {0x197, 1, 209, 1},     {0x198, 1, 1, 1},
    {0x19C, 1, 211, 1},     {0x19D, 1, 213, 1},     {0x19F, 1, 214, 1},     {0x1A0, 3, 1, 2},
    {0x1A6, 1, 218, 1},     {0x1A7, 1, 1, 1},       {0x1A9, 1, 218, 1},     {0x1AC, 1, 1, 1},
    {0x1AE, 1, 218, 1},     {0x1AF, 1, 1, 1},       {0x1B1, 2, 217, 1},     {0x1B3, 2, 1, 2},
    {0x1B7, 1, 219, 1},     {0x1B8, 1, 1, 1},       {0x1BC, 1, 1, 1},       {0x1C4, 1, 2, 1},
    {0x1C5, 1, 1, 1},       {0x1C7, 1, 2, 1},       {0x1C8, 1, 1, 1},       {0x1CA, 1, 2, 1},
    {0x1CB, 9, 1, 2},       {0x1DE, 9, 1, 2},       {0x1F1, 1, 2, 1},       {0x1F2, 2, 1, 2},
    {0x1F6, 1, -97, 1},     {0x1F7, 1, -56, 1},     {0x1F8, 20, 1, 2},      {0x220, 1, -130, 1},
    {0x222, 9, 1, 2},       {0x23A, 1, 10795, 1},   {0x23B, 1, 1, 1},       {0x23D, 1, -163, 1},
    {0x23E, 1, 10792, 1},   {0x241, 1, 1, 1},       {0x243, 1, -195, 1},    {0x244, 1, 69, 1},
    {0x245, 1, 71, 1},      {0x246, 5, 1, 2},       {0x370, 2, 1, 2},       {0x376, 1, 1, 1},
    {0x37F, 1, 116, 1},     {0x386, 1, 38, 1},      {0x388, 3, 37, 1},      {0x38C, 1, 64, 1},
    {0x38E, 2, 63, 1},      {0x391, 17, 32, 1},     {0x3A3, 9, 32, 1},      {0x3CF, 1, 8, 1},
    {0x3D8, 12, 1, 2},      {0x3F4, 1, -60, 1},     {0x3F7, 1, 1, 1},       {0x3F9, 1, -7, 1},
    {0x3FA, 1, 1, 1},       {0x3FD, 3, -130, 1},    {0x400, 16, 80, 1},     {0x410, 32, 32, 1},
    {0x460, 17, 1, 2},      {0x48A, 27, 1, 2},      {0x4C0, 1, 15, 1},      {0x4C1, 7, 1, 2},
    {0x4D0, 48, 1, 2},      {0x531, 38, 48, 1},     {0x10A0, 38, 7264, 1},  {0x10C7, 1, 7264, 1},
    {0x10CD, 1, 7264, 1},   {0x13A0, 80, 38864, 1}, {0x13F0, 6, 8, 1},      {0x1C90, 43, -3008, 1},
    {0x1CBD, 3, -3008, 1},  {0x1E00, 75, 1, 2},     {0x1E9E, 1, -7615, 1},  {0x1EA0, 48, 1, 2},
    {0x1F08, 8, -8, 1},     {0x1F18, 6, -8, 1},     {0x1F28, 8, -8, 1},     {0x1F38, 8, -8, 1},
    {0x1F48, 6, -8, 1},     {0x1F59, 4, -8, 2},     {0x1F68, 8, -8, 1},     {0x1F88, 8, -8, 1},
    {0x1F98, 8, -8, 1},     {0x1FA8, 8, -8, 1},     {0x1FB8, 2, -8, 1},     {0x1FBA, 2, -74, 1},
    {0x1FBC, 1, -9, 1},     {0x1FC8, 4, -86, 1},    {0x1FCC, 1, -9, 1},     {0x1FD8, 2, -8, 1},
    {0x1FDA, 2, -100, 1},   {0x1FE8, 2, -8, 1},     {0x1FEA, 2, -112, 1},   {0x1FEC, 1, -7, 1},
    {0x1FF8, 2, -128, 1},   {0x1FFA, 2, -126, 1},   {0x1FFC, 1, -9, 1},     {0x2126, 1, -7517, 1},
    {0x212A, 1, -8383, 1},  {0x212B, 1, -8262, 1},  {0x2132, 1, 28, 1},     {0x2160, 16, 16, 1},
    {0x2183, 1, 1, 1},      {0x24B6, 26, 26, 1},    {0x2C00, 48, 48, 1},    {0x2C60, 1, 1, 1},
    {0x2C62, 1, -10743, 1}, {0x2C63, 1, -3814, 1},  {0x2C64, 1, -10727, 1}, {0x2C67, 3, 1, 2},
    {0x2C6D, 1, -10780, 1}, {0x2C6E, 1, -10749, 1}, {0x2C6F, 1, -10783, 1}, {0x2C70, 1, -10782, 1},
    {0x2C72, 1, 1, 1},      {0x2C75, 1, 1, 1},      {0x2C7E, 2, -10815, 1}, {0x2C80, 50, 1, 2},
    {0x2CEB, 2, 1, 2},      {0x2CF2, 1, 1, 1},      {0xA640, 23, 1, 2},     {0xA680, 14, 1, 2},
    {0xA722, 7, 1, 2},      {0xA732, 31, 1, 2},     {0xA779, 2, 1, 2},      {0xA77D, 1, -35332, 1},
    {0xA77E, 5, 1, 2},      {0xA78B, 1, 1, 1},      {0xA78D, 1, -42280, 1}, {0xA790, 2, 1, 2},
    {0xA796, 10, 1, 2},     {0xA7AA, 1, -42308, 1}, {0xA7AB, 1, -42319, 1}, {0xA7AC, 1, -42315, 1},
    {0xA7AD, 1, -42305, 1}, {0xA7AE, 1, -42308, 1}, {0xA7B0, 1, -42258, 1}, {0xA7B1, 1, -42282, 1},
    {0xA7B2, 1, -42261, 1}, {0xA7B3, 1, 928, 1},    {0xA7B4, 8, 1, 2},      {0xA7C4, 1, -48, 1},
    {0xA7C5, 1, -42307, 1}, {0xA7C6, 1, -35384, 1}, {0xA7C7, 2, 1, 2},      {0xA7D0, 1, 1, 1},
    {0xA7D6, 2, 1, 2},      {0xA7F5, 1, 1, 1},      {0xFF21, 26, 32, 1},    {0x10400, 40, 40, 1},
    {0x104B0, 36, 40, 1},   {0x10570, 11, 39, 1},   {0x1057C, 15, 39, 1},   {0x1058C, 7, 39, 1},
    {0x10594, 2, 39, 1},    {0x10C80, 51, 64, 1},   {0x118A0, 32, 32, 1},   {0x16E40, 32, 32, 1},
    {0x1E900, 34, 34, 1}};

struct Range {
  std::uint32_t first, last;
};
// Case-ignorable and cased characters for the Final_Sigma rule, restricted to U+0000..U+058F
// U+1D00..U+206F and U+FE00..U+FEFF (Latin, Greek, Cyrillic, Armenian, Greek Extended, general
// punctuation, variation selectors, BOM).
constexpr Range kCaseIgnorable[] = {
    {0x27, 0x27},     {0x2E, 0x2E},     {0x3A, 0x3A},     {0x5E, 0x5E},     {0x60, 0x60},
    {0xA8, 0xA8},     {0xAD, 0xAD},     {0xAF, 0xAF},     {0xB4, 0xB4},     {0xB7, 0xB8},
    {0x2B0, 0x36F},   {0x374, 0x375},   {0x37A, 0x37A},   {0x384, 0x385},   {0x387, 0x387},
    {0x483, 0x489},   {0x559, 0x559},   {0x55F, 0x55F},   {0x1D2C, 0x1D6A}, {0x1D78, 0x1D78},
    {0x1D9B, 0x1DFF}, {0x1FBD, 0x1FBD}, {0x1FBF, 0x1FC1}, {0x1FCD, 0x1FCF}, {0x1FDD, 0x1FDF},
    {0x1FED, 0x1FEF}, {0x1FFD, 0x1FFE}, {0x200B, 0x200F}, {0x2018, 0x2019}, {0x2024, 0x2024},
    {0x2027, 0x2027}, {0x202A, 0x202E}, {0x2060, 0x2064}, {0x2066, 0x206F}, {0xFE00, 0xFE0F},
    {0xFE13, 0xFE13}, {0xFE20, 0xFE2F}, {0xFE52, 0xFE52}, {0xFE55, 0xFE55}, {0xFEFF, 0xFEFF}};
constexpr Range kCased[] = {
    {0x41, 0x5A},     {0x61, 0x7A},     {0xAA, 0xAA},     {0xB5, 0xB5},     {0xBA, 0xBA},
    {0xC0, 0xD6},     {0xD8, 0xF6},     {0xF8, 0x1BA},    {0x1BC, 0x1BF},   {0x1C4, 0x293},
    {0x295, 0x2AF},   {0x370, 0x373},   {0x376, 0x377},   {0x37B, 0x37D},   {0x37F, 0x37F},
    {0x386, 0x386},   {0x388, 0x38A},   {0x38C, 0x38C},   {0x38E, 0x3A1},   {0x3A3, 0x3F5},
    {0x3F7, 0x481},   {0x48A, 0x52F},   {0x531, 0x556},   {0x560, 0x588},   {0x1D00, 0x1D2B},
    {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D}, {0x1F20, 0x1F45},
    {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D},
    {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4},
    {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4},
    {0x1FF6, 0x1FFC}};

template <std::size_t N>
bool in_ranges(const Range (&ranges)[N], char32_t c) {
  const auto it = std::upper_bound(std::begin(ranges), std::end(ranges), c,
                                   [](char32_t value, const Range& r) { return value < r.first; });
  return it != std::begin(ranges) && c <= std::prev(it)->last;
}

char32_t lower_simple(char32_t c) {
  const auto it =
      std::upper_bound(std::begin(kLowerRuns), std::end(kLowerRuns), c,
                       [](char32_t value, const LowerRun& run) { return value < run.first; });
  if (it == std::begin(kLowerRuns)) return c;
  const LowerRun& run = *std::prev(it);
  const std::uint32_t offset = c - run.first;
  if (offset % run.stride != 0 || offset / run.stride >= run.count) return c;
  return static_cast<char32_t>(static_cast<std::int64_t>(c) + run.delta);
}

// CPython's handle_capital_sigma: final when a cased character precedes (skipping
// case-ignorables) and none follows.
bool is_final_sigma(std::u32string_view text, std::size_t i) {
  std::size_t j = i;
  while (j > 0 && in_ranges(kCaseIgnorable, text[j - 1])) --j;
  if (j == 0 || !in_ranges(kCased, text[j - 1])) return false;
  std::size_t k = i + 1;
  while (k < text.size() && in_ranges(kCaseIgnorable, text[k])) ++k;
  return k == text.size() || !in_ranges(kCased, text[k]);
}

// str.split()'s words of `text`, whose code point at position i `read(i, length)` returns with
// its length in positions.
template <typename View, typename Read>
std::vector<View> split_words(View text, Read read) {
  std::vector<View> words;
  std::size_t start = View::npos;
  for (std::size_t i = 0, length = 0; i < text.size(); i += length) {
    const bool space = is_python_whitespace(read(i, length));
    if (space && start != View::npos) {
      words.push_back(text.substr(start, i - start));
      start = View::npos;
    } else if (!space && start == View::npos) {
      start = i;
    }
  }
  if (start != View::npos) words.push_back(text.substr(start));
  return words;
}

}  // namespace

std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::nullopt;
}

std::u32string decode_utf8(std::string_view text) {
  if (const auto bad = find_invalid_utf8(text)) {
    throw std::invalid_argument("invalid UTF-8 at byte " + std::to_string(*bad));
  }
  std::u32string out;
  out.reserve(text.size());
  for (std::size_t i = 0, length = 0; i < text.size(); i += length) {
    out.push_back(code_point_at(text, i, length));
  }
  return out;
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char32_t c : text) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

bool is_python_whitespace(char32_t c) {
  if (c <= 0x20) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  if (c < 0x85) return false;
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::vector<std::string_view> split_python_whitespace(std::string_view utf8) {
  return split_words(
      utf8, [utf8](std::size_t i, std::size_t& length) { return code_point_at(utf8, i, length); });
}

std::vector<std::u32string_view> split_python_whitespace(std::u32string_view text) {
  return split_words(text, [text](std::size_t i, std::size_t& length) {
    length = 1;
    return text[i];
  });
}

std::u32string join_python_words(std::u32string_view text) {
  std::u32string out;
  for (const auto word : split_python_whitespace(text)) {
    if (!out.empty()) out.push_back(U' ');
    out.append(word);
  }
  return out;
}

std::string_view rstrip_python_whitespace(std::string_view utf8) {
  std::size_t end = utf8.size();
  while (end > 0) {
    std::size_t lead = end - 1;  // step back to the first byte of the last code point
    while (lead > 0 && (byte_at(utf8, lead) & 0xC0) == 0x80) --lead;
    std::size_t length = 0;
    if (!is_python_whitespace(code_point_at(utf8, lead, length))) break;
    end = lead;
  }
  return utf8.substr(0, end);
}

std::u32string python_lower(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c == 0x0130) {  // the only multi-character lowercase mapping: I with dot above
      out.append(U"i\u0307");
    } else if (c == 0x03A3) {
      out.push_back(is_final_sigma(text, i) ? U'\u03C2' : U'\u03C3');
    } else {
      out.push_back(lower_simple(c));
    }
  }
  return out;
}

std::string python_lower(std::string_view utf8) {
  // ASCII needs no tables and no sigma context; most MT output is mostly ASCII.
  if (std::all_of(utf8.begin(), utf8.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    std::string out(utf8);
    for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
    return out;
  }
  return encode_utf8(python_lower(decode_utf8(utf8)));
}

}  // namespace nmt::eval
