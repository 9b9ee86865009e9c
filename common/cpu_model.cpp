#include "common/cpu_model.h"

#include <fstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace nmt {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// CPUID leaves 0x80000002..4: 48 bytes of text, NUL-padded; empty where the CPU has none.
std::string cpuid_brand() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000004u) return {};
  char brand[49] = {0};
  for (unsigned int leaf = 0; leaf < 3; ++leaf) {
    __get_cpuid(0x80000002u + leaf, &eax, &ebx, &ecx, &edx);
    const unsigned int words[4] = {eax, ebx, ecx, edx};
    for (int w = 0; w < 4; ++w) {
      for (int b = 0; b < 4; ++b) {
        brand[leaf * 16 + w * 4 + b] = static_cast<char>((words[w] >> (8 * b)) & 0xff);
      }
    }
  }
  return trimmed(brand);
#else
  return {};
#endif
}

std::string proc_cpuinfo_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (trimmed(line.substr(0, colon)) == "model name") return trimmed(line.substr(colon + 1));
  }
  return {};
}

}  // namespace

std::string cpu_model() {
  const std::string brand = cpuid_brand();
  return brand.empty() ? proc_cpuinfo_model() : brand;
}

}  // namespace nmt
