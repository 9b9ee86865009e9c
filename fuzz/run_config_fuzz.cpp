// Fuzz harness: nmt-train's run config (trainer/config/train_config.h, nmt_run_config) as YAML
// text plus --set overrides: "YAML <RS> override lines". Expected: a ConfigError naming file, line
// and key, or std::invalid_argument from validate(). Checked: a config that loads and validates
// writes (to_yaml, the copy in the run directory and every checkpoint) YAML that loads back to the
// same config.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/config_loader.h"
#include "fuzz/fuzz_input.h"
#include "trainer/config/train_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nmt::fuzz::quiet_logs();
  const auto parts = nmt::fuzz::split_parts(nmt::fuzz::as_text(data, size), 2);
  const std::string path = nmt::fuzz::scratch().write("config.yaml", parts[0]);
  nmt::RunConfig config;
  try {
    config = nmt::load_run_config(path, nmt::fuzz::nonempty_lines(parts[1]));
    config.validate();
  } catch (const nmt::ConfigError&) {
    return 0;
  } catch (const std::invalid_argument&) {
    return 0;
  }
  nmt::fuzz::check_yaml_round_trip(nmt::to_yaml(config), [](const std::string& written) {
    return nmt::to_yaml(nmt::parse_run_config(written, "to_yaml"));
  });
  return 0;
}
