#pragma once
// Device selection at run time: the same binary runs on CPU here and on CUDA on a cluster when it
// is linked against a CUDA LibTorch. No #ifdefs: LibTorch answers whether CUDA is present.

#include <c10/core/Device.h>

#include <string>

namespace nmt::runtime {

// Parses "cpu", "cuda", "cuda:N" or "auto" (CUDA when available, else CPU). Throws
// std::invalid_argument for other names, or when CUDA is asked for and not available, saying why.
c10::Device select_device(const std::string& name);

// A one-line description: "cpu (2 threads)" or "cuda:0 (of 8 GPUs)".
std::string describe_device(const c10::Device& device);

}  // namespace nmt::runtime
