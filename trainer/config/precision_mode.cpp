#include "trainer/config/precision_mode.h"

#include "common/named_choices.h"

namespace nmt::runtime {
namespace {

constexpr NamedChoices<Precision, 5> kPrecisions{{{{Precision::kAuto, "auto"},
                                                   {Precision::kFp32, "fp32"},
                                                   {Precision::kBf16, "bf16"},
                                                   {Precision::kFp16, "fp16"},
                                                   {Precision::kInt8, "int8"}}}};

}  // namespace

Precision parse_precision(const std::string& name) {
  return kPrecisions.parse(name, "precision");
}

const char* precision_name(Precision precision) {
  return kPrecisions.name(precision);
}

}  // namespace nmt::runtime
