#include "apps/runtime_flags.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/cli.h"
#include "common/config_fields.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/precision.h"

namespace nmt::apps {
namespace {

constexpr const char* kDeviceHelp = "cpu, cuda, cuda:N or auto";
constexpr const char* kThreadsHelp =
    "CPU threads, 0: every CPU this process may run on (its affinity mask)";
constexpr const char* kPrecisionHelp = "auto, fp32, bf16 or fp16";
constexpr const char* kDecodePrecisionHelp =
    "auto, fp32, bf16, fp16 or int8 (CPU only: int8 weights in every linear map and the "
    "embeddings, activations quantized per call)";
constexpr const char* kDeviceAuto =
    "bf16 where the device runs it natively and faster (GPUs of compute capability 8.0+, CPUs "
    "with AMX or AVX512-BF16), else fp32";

// The one check of each runtime flag's value: a wrong one is an argument error.
CLI::Option* check_device(CLI::Option* option) {
  return option->check(parsed_by(runtime::check_device_name));
}
CLI::Option* check_threads(CLI::Option* option) {
  return option->check(CLI::NonNegativeNumber);
}
CLI::Option* check_precision(CLI::Option* option) {
  return option->check(parsed_by(runtime::parse_precision));
}

// What a shortcut flag of nmt-train holds.
enum class Value {
  kText,       // any non-empty string
  kDevice,     // --device's names
  kThreads,    // an integer >= 0
  kPrecision,  // --precision's names
  kSwitch,     // no value: sets the key to true
};

struct ConfigFlag {
  const char* flag;
  const char* key;  // the config key it sets
  Value value;
  const char* help;  // what it is; the key it sets is added
};

// nmt-train's shortcuts for config keys.
constexpr ConfigFlag kConfigFlags[] = {
    {"--data", "data.dir", Value::kText, "Shard directory"},
    {"--device", "train.device", Value::kDevice, kDeviceHelp},
    {"--allow-shared-gpu", "train.allow_shared_gpu", Value::kSwitch,
     "Let ranks of one node share a GPU, round-robin where they outnumber the GPUs; without it "
     "such a start is an error"},
    {"--threads", "train.threads", Value::kThreads, kThreadsHelp},
    {"--precision", "train.precision", Value::kPrecision, kPrecisionHelp},
    {"--experiment", "tracker.experiment", Value::kText, "Tracker experiment"},
};

std::string config_flag_help(const ConfigFlag& f) {
  const std::string sets = f.value == Value::kSwitch ? "sets " : "overrides ";
  std::string help = fmt::format("{} ({}{}", f.help, sets, f.key);
  if (f.value == Value::kPrecision) help += fmt::format("; auto: {}", kDeviceAuto);
  return help + ")";
}

CLI::Option* add_config_flag(CLI::App& app, const ConfigFlag& f,
                             std::vector<std::string>& assignments) {
  const std::string key = f.key;
  const std::string help = config_flag_help(f);
  switch (f.value) {
    case Value::kSwitch:
      return app.add_flag_function(
          f.flag,
          [&assignments, key](std::int64_t count) {
            if (count > 0) assignments.push_back(key + "=true");
          },
          help);
    case Value::kThreads:
      return check_threads(app.add_option_function<int>(
          f.flag,
          [&assignments, key](int threads) {
            assignments.push_back(key + "=" + std::to_string(threads));
          },
          help));
    case Value::kText:
    case Value::kDevice:
    case Value::kPrecision:
      break;
  }
  auto* option = app.add_option_function<std::string>(
      f.flag,
      [&assignments, key](const std::string& text) {
        if (!text.empty()) assignments.push_back(key + "=" + yaml_string(text));
      },
      help);
  if (f.value == Value::kDevice) return check_device(option);
  if (f.value == Value::kPrecision) return check_precision(option);
  return option;
}

}  // namespace

void add_checkpoint_flag(CLI::App& app, std::string& checkpoint) {
  app.add_option("--checkpoint", checkpoint, "Checkpoint (trained or nmt-average output)")
      ->required();
}

void add_runtime_flags(CLI::App& app, RuntimeFlags& flags) {
  check_device(app.add_option("--device", flags.device, kDeviceHelp))->capture_default_str();
  check_threads(app.add_option("--threads", flags.threads, kThreadsHelp));
  check_precision(
      app.add_option("--precision", flags.precision,
                     fmt::format("{}; auto: the precision the run trained in, its config's "
                                 "train.precision, where this device runs it natively; else {}",
                                 kDecodePrecisionHelp, kDeviceAuto)))
      ->capture_default_str();
}

Runtime resolve_runtime(const RuntimeFlags& flags, const RunConfig& run) {
  Runtime r;
  r.device = runtime::select_device(flags.device);
  if (r.device.is_cpu()) {
    runtime::configure_cpu_threads(flags.threads);
    r.threads = flags.threads > 0 ? flags.threads : runtime::available_cpus();
  }
  const auto choice = runtime::resolve_run_precision(runtime::parse_precision(flags.precision),
                                                     run.train.precision, r.device);
  spdlog::info("precision {} ({})", runtime::precision_name(choice.precision), choice.reason);
  r.precision = choice.precision;
  return r;
}

GivenBeam given_beam_flags(const CLI::App& app) {
  return {app.count("--beam") > 0, app.count("--alpha") > 0};
}

void beam_and_alpha_of_run(GivenBeam given, const DecodeConfig& run, std::int64_t& beam,
                           double& alpha) {
  if (!given.beam) beam = run.beam;
  if (!given.alpha) alpha = run.alpha;
}

void add_config_flags(CLI::App& app, std::vector<std::string>& assignments) {
  for (const auto& flag : kConfigFlags) add_config_flag(app, flag, assignments);
}

}  // namespace nmt::apps
