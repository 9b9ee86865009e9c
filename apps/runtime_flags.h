#pragma once
// The command-line flags that say where and how the LibTorch tools run, in one place for
// nmt-train, nmt-translate and nmt-evaluate: --device, --threads and --precision with one help text
// and one check each; their resolution for the tools that work on a trained run's checkpoint; the
// beam and length penalty such a tool decodes with; and nmt-train's shortcut flags, each of which
// sets one config key through the loader that reads --set.

#include <c10/core/Device.h>
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/config/precision_mode.h"
#include "trainer/config/train_config.h"

namespace nmt::apps {

// --checkpoint (required): the checkpoint such a tool works on.
void add_checkpoint_flag(CLI::App& app, std::string& checkpoint);

// --device, --threads, --precision of a tool that works on a trained run's checkpoint.
struct RuntimeFlags {
  std::string device = "cpu";      // cpu, cuda, cuda:N or auto
  int threads = 0;                 // CPU threads; 0: all cores
  std::string precision = "auto";  // auto: the run's, where this device runs it natively
};
void add_runtime_flags(CLI::App& app, RuntimeFlags& flags);

// Where and how such a tool runs, resolved.
struct Runtime {
  c10::Device device = c10::Device(c10::kCPU);
  runtime::Precision precision = runtime::Precision::kFp32;  // never kAuto
  int threads = 1;  // CPU threads this tool runs (--threads, else available_cpus()); 1 on a GPU
};
// Selects the device (CPU threads set there), and the precision: an explicit one checked against
// the device, auto the run's (`run`, the checkpoint's config) where the device runs it natively,
// else the device's own auto choice (runtime::resolve_run_precision). Logs the precision and why.
Runtime resolve_runtime(const RuntimeFlags& flags, const RunConfig& run);

// Which of --beam and --alpha a command line gave.
struct GivenBeam {
  bool beam = false;
  bool alpha = false;
};
GivenBeam given_beam_flags(const CLI::App& app);
// The beam size and length penalty to decode a run's checkpoint with: --beam and --alpha where
// given, else the run's decode.beam and decode.alpha. `beam` and `alpha` hold the flags' values on
// entry.
void beam_and_alpha_of_run(GivenBeam given, const DecodeConfig& run, std::int64_t& beam,
                           double& alpha);

// nmt-train's shortcut flags (--data, --device, --threads, --precision, --allow-shared-gpu,
// --experiment): each sets one config key, as `--set KEY=VALUE` does, and is listed once, with
// its key, in runtime_flags.cpp. A given flag appends its assignment to `assignments`; apply them
// after the --set ones, so that a flag beats --set. An empty value sets nothing.
void add_config_flags(CLI::App& app, std::vector<std::string>& assignments);

}  // namespace nmt::apps
