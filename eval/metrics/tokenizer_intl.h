#pragma once
// sacreBLEU 2.x's "intl" tokenizer (tokenizers/tokenizer_intl.py, after mteval-v14's
// international tokenization): three regex passes over Unicode general categories, then
// whitespace collapsed:
//   (\P{N})(\p{P}) -> "\1 \2 "   punctuation split off unless a number precedes it
//   (\p{P})(\P{N}) -> " \1 \2"   ... or unless a number follows it
//   (\p{S})        -> " \1 "     every symbol split off
// The categories come from ICU (u_charType) as linked at build time, not a hand-written table;
// sacreBLEU takes them from the `regex` module's Unicode database, so the two agree wherever
// their Unicode versions give a code point the same category (Debian bookworm's ICU 72 has
// Unicode 15.0; code points assigned or recategorised in other versions may differ). As in
// mteval-v14 a number followed by a final period keeps it ("in 1990." -> "in 1990.").

#include <string>
#include <string_view>

namespace nmt::eval {

// `line` must be valid UTF-8 (std::invalid_argument otherwise).
std::string tokenize_intl(std::string_view line);

}  // namespace nmt::eval
