#include "trainer/train/run_choices.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <stdexcept>
#include <vector>

namespace nmt::train {

// The precision this run trains and validates in (auto resolved on this device; every rank must
// agree, so auto is bf16 only where every rank chose it). The resolved value replaces auto in the
// run's config, hence in config.yaml and its checkpoints, and a resumed run asked for auto keeps
// the precision its checkpoint was trained in rather than probing again.
runtime::PrecisionChoice choose_precision(RunConfig& config, const RunConfig* stored,
                                          const c10::Device& device,
                                          const distributed::Communicator& comm) {
  const bool kept = config.train.precision == runtime::Precision::kAuto && stored != nullptr &&
                    stored->train.precision != runtime::Precision::kAuto;
  if (kept) config.train.precision = stored->train.precision;
  auto choice = runtime::resolve_precision(config.train.precision, device);
  if (kept) choice.reason = "auto: the precision the run's checkpoint was trained in";
  if (comm.size() > 1 && config.train.precision == runtime::Precision::kAuto) {
    std::vector<double> bf16 = {choice.precision == runtime::Precision::kBf16 ? 1.0 : 0.0};
    comm.allreduce_sum(bf16);
    if (choice.precision == runtime::Precision::kBf16 && bf16[0] < comm.size()) {
      choice = {runtime::Precision::kFp32, "auto: fp32, as some ranks' devices lack fast bf16"};
    }
  }
  config.train.precision = choice.precision;
  if (comm.is_root()) {
    spdlog::info("precision {} ({})", runtime::precision_name(choice.precision), choice.reason);
  }
  return choice;
}

// How many batches one update takes over all ranks: the config's, else the resumed checkpoint's,
// else (a fresh run) accumulation x ranks; fixed from then on, so a run resumed on another number
// of ranks keeps its updates, and each rank accumulates its share.
void choose_update_batches(RunConfig& config, const RunConfig* stored,
                           const distributed::Communicator& comm) {
  auto& t = config.train;
  const std::int64_t ranks = comm.size();
  const bool root = comm.is_root();
  if (t.update_batches == 0 && stored != nullptr) t.update_batches = stored->train.update_batches;
  if (t.update_batches == 0) {
    t.update_batches = t.accumulation * ranks;
    if (stored != nullptr && root) {
      spdlog::warn(
          "the checkpoint predates train.update_batches: assuming {} batches per update "
          "(train.accumulation {} x {} ranks); if it was trained on another number of ranks, set "
          "train.update_batches to its ranks x accumulation to keep its update size",
          t.update_batches, t.accumulation, ranks);
    }
  } else if (t.accumulation != 1 && t.accumulation * ranks != t.update_batches && root) {
    spdlog::warn("train.accumulation {} is replaced by train.update_batches {} over {} rank(s)",
                 t.accumulation, t.update_batches, ranks);
  }
  if (stored != nullptr && stored->train.update_batches > 0 &&
      stored->train.update_batches != t.update_batches && root) {
    spdlog::warn("train.update_batches {} differs from the checkpoint's {}: updates change size",
                 t.update_batches, stored->train.update_batches);
  }
  if (t.update_batches % ranks != 0) {
    throw std::invalid_argument(fmt::format(
        "train.update_batches: {} batches per update cannot be shared by {} ranks; use a number "
        "of ranks that divides it",
        t.update_batches, ranks));
  }
  t.accumulation = t.update_batches / ranks;
  if (comm.is_root()) {
    spdlog::info("{} batches per update ({} per rank on {} rank(s))", t.update_batches,
                 t.accumulation, ranks);
  }
}

}  // namespace nmt::train
