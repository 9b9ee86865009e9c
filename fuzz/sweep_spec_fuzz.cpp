// Fuzz harness: a sweep spec (sweep/sweep_spec.h) as nmt-sweep loads it, beside a fixed base run
// config (base.yaml: a valid small config, so that rows resolve). Expected: a ConfigError naming
// the file, the row and the key, or std::invalid_argument. A spec that loads also names its rows'
// folders (row_slug), as nmt-sweep does before it starts anything.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/config_loader.h"
#include "fuzz/fuzz_input.h"
#include "sweep/sweep_spec.h"

namespace {

constexpr const char* kBaseConfig = R"(model:
  d_model: 64
  d_ff: 128
  heads: 4
  layers: 2
train:
  max_steps: 10
  warmup_steps: 4
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nmt::fuzz::quiet_logs();
  static const std::string base = nmt::fuzz::scratch().write("base.yaml", kBaseConfig);
  (void)base;
  const std::string path = nmt::fuzz::scratch().write("sweep.yaml", nmt::fuzz::as_text(data, size));
  try {
    const nmt::sweep::SweepSpec spec = nmt::sweep::load_sweep_spec(path);
    for (std::size_t i = 0; i < spec.rows.size(); ++i) (void)nmt::sweep::row_slug(spec, i);
  } catch (const nmt::ConfigError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
