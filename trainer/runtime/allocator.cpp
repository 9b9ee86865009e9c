// Which malloc the process runs on, from the dynamic linker's view of the symbol "malloc".

#include "trainer/runtime/allocator.h"

#include <dlfcn.h>

#include <utility>

namespace nmt::runtime {

std::string malloc_implementation() {
  void* const malloc_symbol = dlsym(RTLD_DEFAULT, "malloc");
  // Each allocator also exports its malloc under its own name; the process's malloc is that one
  // exactly when the two addresses agree.
  for (const auto& [name, own_symbol] :
       {std::pair<const char*, const char*>{"tcmalloc", "tc_malloc"}, {"jemalloc", "je_malloc"}}) {
    void* const own = dlsym(RTLD_DEFAULT, own_symbol);
    if (own != nullptr && own == malloc_symbol) return name;
  }
  return "glibc";
}

}  // namespace nmt::runtime
