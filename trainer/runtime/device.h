#pragma once
// Device selection at run time: the same binary runs on CPU here and on CUDA on a cluster when it
// is linked against a CUDA LibTorch. No #ifdefs: LibTorch answers whether CUDA is present.

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace nmt::runtime {

// Parses "cpu", "cuda", "cuda:N" or "auto" (CUDA when available, else CPU). Throws
// std::invalid_argument for other names, or when CUDA is asked for and not available, saying why.
c10::Device select_device(const std::string& name);
// The same names checked for their form only (no CUDA query): std::invalid_argument for others.
// For command-line checks (nmt::parsed_by), so that a misspelt --device is an argument error.
void check_device_name(const std::string& name);

// Which GPU each rank of a node takes: device_assignment.h (no LibTorch there).

// A one-line description: "cpu (2 threads)" or "cuda:0 (of 8 GPUs)".
std::string describe_device(const c10::Device& device);

// Reseeds the default random generator of `device` (dropout's), and no other. Cheap: a training
// step calls it per micro-batch so that dropout depends on which batch of which update it is, not
// on the rank that computes it or on what ran before.
void seed_generator(const c10::Device& device, std::uint64_t seed);

}  // namespace nmt::runtime
