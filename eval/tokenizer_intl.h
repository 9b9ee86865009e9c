#pragma once
// sacreBLEU 2.x's "intl" tokenizer (tokenizers/tokenizer_intl.py, after mteval-v14's
// international tokenization): three regex passes over Unicode general categories, then
// whitespace collapsed:
//   (\P{N})(\p{P}) -> "\1 \2 "   punctuation split off unless a number precedes it
//   (\p{P})(\P{N}) -> " \1 \2"   ... or unless a number follows it
//   (\p{S})        -> " \1 "     every symbol split off
// The categories come from ICU (u_charType), not a hand-written table; sacreBLEU takes them from
// the `regex` module's Unicode database, so the two agree wherever ICU's Unicode version (72:
// Unicode 15.0) and regex's have the same category for a code point (they differ only for code
// points assigned after Unicode 15). As in mteval-v14 a number followed by a final period keeps it
// ("in 1990." -> "in 1990.").

#include <string>
#include <string_view>

namespace nmt::eval {

// `line` must be valid UTF-8 (std::invalid_argument otherwise).
std::string tokenize_intl(std::string_view line);

}  // namespace nmt::eval
