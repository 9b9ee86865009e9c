#pragma once
// The numeric precision of training and decoding, as the config and the command lines name it.
// Parsed once here; everything else compares the enum. No LibTorch: the run config uses it.

#include <string>

namespace nmt::runtime {

enum class Precision {
  kAuto,  // bf16 where the device runs it natively and measurably faster, else fp32
  kFp32,  // fp32 (TF32 matrix products on CUDA)
  kBf16,  // bf16 autocast, fp32 master weights and loss
  kFp16,  // fp16 autocast with dynamic loss scaling (CUDA only)
  kInt8,  // decoding on a CPU only: int8 weights of the linear maps, activations quantized per call
};

// "auto", "fp32", "bf16", "fp16", "int8"; anything else is an std::invalid_argument listing the
// choices.
Precision parse_precision(const std::string& name);
const char* precision_name(Precision precision);

}  // namespace nmt::runtime
