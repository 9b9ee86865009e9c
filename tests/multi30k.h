#pragma once
// Where the tests find Multi30k, as the tools do: $NMT_DATA_DIR, else the folder CMake was
// configured with (NMT_DATA_DIR: ../shared/data/multi30k beside the checkout, by default), which
// the test's target passes as NMT_TEST_DATA_DIR. A test that needs it and does not find it skips
// naming the folder; the test multi30k_data (tests/scripts/data_present_test.sh) fails instead
// where the data is required (NMT_REQUIRE_DATA=1, as in CI).

#include <cstdlib>
#include <string>

#ifndef NMT_TEST_DATA_DIR
#error "NMT_TEST_DATA_DIR: give the test target the configured data folder (tests/CMakeLists.txt)"
#endif

namespace nmt::testing {

inline std::string multi30k_dir() {
  const char* env = std::getenv("NMT_DATA_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(NMT_TEST_DATA_DIR);
}

}  // namespace nmt::testing
