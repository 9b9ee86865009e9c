#pragma once
// The processor's model name, for every figure that must say which CPU it came from (benchmarks,
// nmt-sysinfo, a run's environment).

#include <string>

namespace nmt {

// "Intel(R) Xeon(R) Platinum 8488C": CPUID's brand string on x86, else /proc/cpuinfo's "model
// name"; empty when neither says.
std::string cpu_model();

}  // namespace nmt
