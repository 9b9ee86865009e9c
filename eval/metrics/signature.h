#pragma once
// sacreBLEU 2.x's reproducibility signatures (metrics/base.py: Signature): "key:value" fields
// joined by '|', in sacreBLEU's order: nrefs, the resampling fields (bs, ar, seed) when a test
// ran, the metric's own fields, and the version last; --short uses the abbreviated keys
// (#, bs, ar, rs, v, and each metric's). The version field says who produced the score and which
// sacreBLEU's algorithms it follows ("nmt-bleu-2.4.0"), so an nmt-bleu score is never taken for
// real sacreBLEU output.

#include <optional>
#include <string>
#include <vector>

namespace nmt::eval {

// The sacreBLEU release whose algorithms and signatures are mirrored. Its BLEU, chrF and TER code
// is unchanged from 2.0 to 2.6 except for tokenizers nmt-bleu does not have (spm variants).
inline constexpr const char* kSacreBleuVersion = "2.4.0";
// The signature's version value.
inline constexpr const char* kSignatureVersion = "nmt-bleu-2.4.0";

struct SignatureField {
  std::string key;        // e.g. "case"
  std::string short_key;  // e.g. "c"
  std::string value;      // e.g. "mixed"
};

struct Signature {
  std::string nrefs;                        // "1", "2"... or "var"
  std::optional<int> bootstrap;             // bs: bootstrap resamples (CI or paired bs)
  std::optional<int> randomization;         // ar: approximate randomization trials
  std::optional<std::string> seed;          // seed: "12345", or "none" when not fixed
  std::vector<SignatureField> fields;       // the metric's own, in order
  std::string version = kSignatureVersion;  // last

  std::string format(bool short_form = false) const;
};

}  // namespace nmt::eval
