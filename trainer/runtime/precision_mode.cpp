#include "trainer/runtime/precision_mode.h"

#include <stdexcept>

namespace nmt::runtime {

Precision parse_precision(const std::string& name) {
  if (name == "auto") return Precision::kAuto;
  if (name == "fp32") return Precision::kFp32;
  if (name == "bf16") return Precision::kBf16;
  if (name == "fp16") return Precision::kFp16;
  throw std::invalid_argument("unknown precision '" + name + "' (expected auto, fp32, bf16, fp16)");
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kAuto:
      return "auto";
    case Precision::kFp32:
      return "fp32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
  }
  return "?";
}

}  // namespace nmt::runtime
