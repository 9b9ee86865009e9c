#pragma once
// The corpora BLEU's and chrF's regression tests share (each test holds its sacreBLEU figures): an
// English one with one reference stream (numbers, punctuation, HTML entities), and a Unicode one
// (German, Greek in upper and lower case, a dash) with two reference streams, one reference empty.

#include <string>
#include <vector>

namespace nmt::eval::testing {

inline const std::vector<std::string> kEnglishHyps = {
    "The cat sat on the mat.", "It costs $3.50, not 1,000 dollars!",
    "A well-known fact: 1990-2000 was a decade.", "He said &quot;hello&quot; &amp; left."};

inline const std::vector<std::vector<std::string>> kEnglishRefs = {
    {"The cat is sitting on the mat.", "It costs $3.50, not 1.000 dollars.",
     "It is a well-known fact that 1990-2000 was a decade.", "He said \"hello\" and left."}};

inline const std::vector<std::string> kUnicodeHyps = {"Das Haus ist sehr schön.", "ΟΔΟΣ ΑΘΗΝΩΝ",
                                                      "Straße gesperrt — Umleitung!"};

// Two reference streams; the first has an empty reference for the second line.
inline const std::vector<std::vector<std::string>> kUnicodeRefs = {
    {"Das Haus ist wunderschön.", "", "Die Straße ist gesperrt, bitte Umleitung nutzen."},
    {"Dieses Haus ist sehr schön!", "οδός Αθηνών", "Straße gesperrt: Umleitung."}};

}  // namespace nmt::eval::testing
