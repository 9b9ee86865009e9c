// The LibTorch tools' runtime flags (apps/runtime_flags.h): precision auto on a trained run's
// checkpoint follows the run's precision where the device runs it natively; --beam and --alpha
// fall back to the run's decode section; nmt-train's shortcut flags set their config keys through
// the loader, after --set.

#include <c10/core/Device.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "apps/runtime_flags.h"
#include "test_utils.h"
#include "trainer/runtime/precision.h"

namespace nmt::apps {
namespace {

using runtime::choose_run_precision;
using runtime::NativePrecisions;
using runtime::Precision;
using runtime::PrecisionChoice;

// The device's own auto choice, counting its calls (on some CPUs it times matrix products).
struct DeviceAuto {
  Precision answer = Precision::kFp32;
  int calls = 0;
  PrecisionChoice operator()() {
    ++calls;
    return {answer, "auto: the device's choice"};
  }
};

TEST(RuntimeFlags, AutoFollowsTheRunWhereTheDeviceRunsItNatively) {
  DeviceAuto device_auto;
  const auto call = [&] { return device_auto(); };
  const NativePrecisions gpu{/*bf16=*/true, /*fp16=*/true};
  const NativePrecisions old_cpu{};
  EXPECT_EQ(choose_run_precision(Precision::kBf16, gpu, call).precision, Precision::kBf16);
  EXPECT_EQ(choose_run_precision(Precision::kFp16, gpu, call).precision, Precision::kFp16);
  // fp32 runs everywhere, also where the device's own choice would be bf16.
  device_auto.answer = Precision::kBf16;
  const auto fp32 = choose_run_precision(Precision::kFp32, gpu, call);
  EXPECT_EQ(fp32.precision, Precision::kFp32);
  EXPECT_NE(fp32.reason.find("the precision the run trained in"), std::string::npos) << fp32.reason;
  EXPECT_EQ(choose_run_precision(Precision::kFp32, old_cpu, call).precision, Precision::kFp32);
  EXPECT_EQ(device_auto.calls, 0) << "no probing when the run's precision is taken";
}

TEST(RuntimeFlags, AutoIsTheDevicesChoiceWhereTheRunsPrecisionIsNotNative) {
  DeviceAuto device_auto;
  const auto call = [&] { return device_auto(); };
  const NativePrecisions old_cpu{};
  const NativePrecisions bf16_cpu{/*bf16=*/true, /*fp16=*/false};
  const auto bf16 = choose_run_precision(Precision::kBf16, old_cpu, call);
  EXPECT_EQ(bf16.precision, Precision::kFp32);
  EXPECT_NE(bf16.reason.find("trained in bf16, which this device does not run natively"),
            std::string::npos)
      << bf16.reason;
  EXPECT_NE(bf16.reason.find("the device's choice"), std::string::npos) << bf16.reason;
  // fp16 is CUDA's: on a CPU with bf16, the device's own choice.
  device_auto.answer = Precision::kBf16;
  EXPECT_EQ(choose_run_precision(Precision::kFp16, bf16_cpu, call).precision, Precision::kBf16);
  // A config that still says auto records nothing to follow.
  const auto unresolved = choose_run_precision(Precision::kAuto, bf16_cpu, call);
  EXPECT_EQ(unresolved.precision, Precision::kBf16);
  EXPECT_NE(unresolved.reason.find("records no resolved precision"), std::string::npos)
      << unresolved.reason;
  EXPECT_EQ(device_auto.calls, 3);
}

TEST(RuntimeFlags, ExplicitPrecisionIsCheckedAgainstTheDeviceWhateverTheRun) {
  const auto cpu = c10::Device(c10::kCPU);
  EXPECT_EQ(runtime::resolve_run_precision(Precision::kFp32, Precision::kBf16, cpu).precision,
            Precision::kFp32);
  EXPECT_EQ(runtime::resolve_run_precision(Precision::kAuto, Precision::kFp32, cpu).precision,
            Precision::kFp32);
  NMT_EXPECT_THROW_WITH(runtime::resolve_run_precision(Precision::kFp16, Precision::kFp16, cpu),
                        std::invalid_argument, "fp16 needs a CUDA device");
  const auto native = runtime::native_precisions(cpu);
  EXPECT_FALSE(native.fp16);
  EXPECT_EQ(native.bf16, runtime::cpu_bf16_instructions() != runtime::CpuBf16::kNone);
}

void parse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
}

TEST(RuntimeFlags, BeamAndAlphaComeFromTheRunUnlessGiven) {
  DecodeConfig run;
  run.beam = 6;
  run.alpha = 1.0;
  for (const auto& [args, beam, alpha] :
       std::vector<std::tuple<std::vector<std::string>, std::int64_t, double>>{
           {{}, 6, 1.0},
           {{"--beam", "2"}, 2, 1.0},
           {{"--alpha", "0.2"}, 6, 0.2},
           {{"--beam", "3", "--alpha", "0"}, 3, 0.0}}) {
    CLI::App app;
    std::int64_t flag_beam = 4;
    double flag_alpha = 0.6;
    app.add_option("--beam", flag_beam);
    app.add_option("--alpha", flag_alpha);
    parse(app, args);
    beam_and_alpha_of_run(given_beam_flags(app), run, flag_beam, flag_alpha);
    EXPECT_EQ(flag_beam, beam) << ::testing::PrintToString(args);
    EXPECT_DOUBLE_EQ(flag_alpha, alpha) << ::testing::PrintToString(args);
  }
}

TEST(RuntimeFlags, RuntimeFlagsHaveOneCheckEach) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--precision", "fp8"}, {"--device", "gpu"}, {"--threads", "-1"}}) {
    CLI::App app;
    RuntimeFlags flags;
    add_runtime_flags(app, flags);
    EXPECT_THROW(parse(app, args), CLI::ValidationError) << ::testing::PrintToString(args);
  }
  CLI::App app;
  RuntimeFlags flags;
  add_runtime_flags(app, flags);
  parse(app, {"--device", "cuda:1", "--threads", "3", "--precision", "bf16"});
  EXPECT_EQ(flags.device, "cuda:1");
  EXPECT_EQ(flags.threads, 3);
  EXPECT_EQ(flags.precision, "bf16");
}

TEST(RuntimeFlags, TrainShortcutsSetTheirConfigKeysAfterSet) {
  CLI::App app;
  std::vector<std::string> set, assignments;
  app.add_option("--set", set);
  add_config_flags(app, assignments);
  parse(app, {"--set", "train.threads=7", "--data", "shards: de-en", "--device", "cuda:0",
              "--threads", "2", "--precision", "bf16", "--allow-shared-gpu", "--experiment", "null",
              "--set", "train.device=cpu"});
  auto overrides = set;
  overrides.insert(overrides.end(), assignments.begin(), assignments.end());
  const auto config = load_run_config("", overrides);
  EXPECT_EQ(config.data.dir, "shards: de-en");
  EXPECT_EQ(config.train.device, "cuda:0");
  EXPECT_EQ(config.train.threads, 2);
  EXPECT_EQ(config.train.precision, Precision::kBf16);
  EXPECT_TRUE(config.train.allow_shared_gpu);
  EXPECT_EQ(config.tracker.experiment, "null");

  CLI::App defaults;
  std::vector<std::string> none;
  add_config_flags(defaults, none);
  parse(defaults, {"--data", ""});
  EXPECT_TRUE(none.empty()) << "not given, or empty: the config's value stays";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--precision", "fp8"}, {"--device", "gpu"}, {"--threads", "-2"}}) {
    CLI::App bad;
    std::vector<std::string> ignored;
    add_config_flags(bad, ignored);
    EXPECT_THROW(parse(bad, args), CLI::ValidationError) << ::testing::PrintToString(args);
  }
}

}  // namespace
}  // namespace nmt::apps
