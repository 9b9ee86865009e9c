#pragma once
// The re.sub passes of sacreBLEU's tokenizers whose patterns name single characters, replayed on
// code points as re.sub runs them: left to right, non-overlapping, a match consuming its
// characters. tokenizer_13a.cpp has the byte version of pair_pass.

#include <string>
#include <string_view>

namespace nmt::eval {

// re.sub(r"([chars])", r" \1 "): a space on each side of every character `pred` accepts.
template <typename Pred>
std::u32string pad_chars(std::u32string_view text, Pred pred) {
  std::u32string out;
  out.reserve(text.size() + text.size() / 2);
  for (const char32_t c : text) {
    if (pred(c)) {
      out.push_back(U' ');
      out.push_back(c);
      out.push_back(U' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// re.sub of a two-character pattern (A)(B), where `match(a, b)` says whether a pair matches and
// `before`, `between` and `after` are what the replacement puts around \1 and \2.
template <typename Match>
std::u32string pair_pass(std::u32string_view text, Match match, std::u32string_view before,
                         std::u32string_view between, std::u32string_view after) {
  std::u32string out;
  out.reserve(text.size() + text.size() / 2);
  std::size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && match(text[i], text[i + 1])) {
      out.append(before).append(1, text[i]).append(between).append(1, text[i + 1]).append(after);
      i += 2;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

}  // namespace nmt::eval
