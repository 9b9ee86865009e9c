#pragma once
// TER's text normalization as sacreBLEU 2.x applies it (tokenizers/tokenizer_ter.py, itself after
// Tercom's Normalizer.java), in the order sacreBLEU runs it:
//   1. lowercase (Python str.lower()) unless case-sensitive;
//   2. --ter-normalized: join "\n-" and "\n", unescape &quot; &amp; &lt; &gt;, pad the line with
//      spaces, split off ASCII symbols as 13a does, " 's" split from possessives ("'s " only: the
//      "'s$" rule can never fire on a padded line), '.' and ',' split unless next to a digit, '-'
//      split after a digit; with --ter-asian-support also every CJK ideograph, radical, stroke,
//      compatibility form and CJK / full-width punctuation mark isolated (sacreBLEU's ranges,
//      including its U+3200..U+3F22 block; its Hiragana/Katakana rules are anchored so that they
//      never match a padded line, and are left out here for that reason);
//   3. --ter-no-punct: remove . , ? : ; ! " ( ) and, with Asian support, CJK and full-width
//      punctuation;
//   4. whitespace (Python's) collapsed to single spaces.

#include <string>
#include <string_view>

namespace nmt::eval {

struct TerOptions {
  bool normalized = false;      // --ter-normalized: Tercom's normalization and tokenization
  bool no_punct = false;        // --ter-no-punct: remove punctuation
  bool asian_support = false;   // --ter-asian-support: CJK handling in normalization/punct removal
  bool case_sensitive = false;  // --ter-case-sensitive: keep case (Tercom lowercases by default)
};

// TercomTokenizer.__call__ on one (right-stripped) segment; `line` is UTF-8.
std::string tokenize_ter(std::string_view line, const TerOptions& options);

}  // namespace nmt::eval
