// Signature::format (see signature.h).

#include "eval/metrics/signature.h"

namespace nmt::eval {

std::string Signature::format(bool short_form) const {
  std::string out;
  const auto add = [&](const std::string& key, const std::string& short_key,
                       const std::string& value) {
    if (!out.empty()) out += '|';
    out += (short_form ? short_key : key) + ":" + value;
  };
  add("nrefs", "#", nrefs);
  if (bootstrap) add("bs", "bs", std::to_string(*bootstrap));
  if (randomization) add("ar", "ar", std::to_string(*randomization));
  if (seed) add("seed", "rs", *seed);
  for (const auto& field : fields) add(field.key, field.short_key, field.value);
  add("version", "v", version);
  return out;
}

}  // namespace nmt::eval
