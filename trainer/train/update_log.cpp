#include "trainer/train/update_log.h"

#include <ATen/ops/full.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "trainer/runtime/cuda_info.h"

namespace nmt::train {
namespace {

void log_rank_throughput(MetricsSink& sink, const distributed::Communicator& comm,
                         std::int64_t step, const LogWindow& w) {
  const auto tok_s = comm.gather(static_cast<double>(w.local_tokens) / w.seconds);
  const auto waits = comm.gather(w.allreduce_seconds / w.seconds);
  if (!comm.is_root()) return;
  for (int r = 0; r < comm.size(); ++r) {
    sink.log(fmt::format("train/rank{}/tokens_per_s", r), step, tok_s[r]);
    sink.log(fmt::format("train/rank{}/allreduce_fraction", r), step, waits[r]);
  }
}

}  // namespace

void LossWindow::add(const at::Tensor& loss_sum, const at::Tensor& nll_sum,
                     std::int64_t tgt_tokens) {
  // In fp64: a sum of fp32 terms that stays exact, whatever the order the ranks' sums meet in.
  // Detached: the window outlives the update's graph.
  const auto loss = loss_sum.detach().to(at::kDouble), nll = nll_sum.detach().to(at::kDouble);
  loss_ = loss_.defined() ? loss_ + loss : loss;
  nll_ = nll_.defined() ? nll_ + nll : nll;
  ++updates_;
  tgt_tokens_ += tgt_tokens;
}

LossWindow::Totals LossWindow::totals(const distributed::Communicator& comm) const {
  std::vector<double> sums = {loss_.defined() ? loss_.item<double>() : 0.0,
                              nll_.defined() ? nll_.item<double>() : 0.0};
  if (comm.size() > 1) comm.allreduce_sum(sums);
  return {updates_, tgt_tokens_, sums[0], sums[1]};
}

void LossWindow::restore(const Totals& stored, const distributed::Communicator& comm,
                         const c10::Device& device) {
  clear();
  updates_ = stored.updates;
  tgt_tokens_ = stored.tgt_tokens;
  if (stored.updates == 0 || !comm.is_root()) return;
  const auto options = at::TensorOptions().dtype(at::kDouble).device(device);
  loss_ = at::full({}, stored.loss_sum, options);
  nll_ = at::full({}, stored.nll_sum, options);
}

void log_updates(MetricsSink& sink, const distributed::Communicator& comm,
                 const c10::Device& device, const UpdateFigures& u, const LogWindow& w) {
  const std::int64_t step = u.step;
  if (comm.size() > 1) log_rank_throughput(sink, comm, step, w);
  const double tok_s = static_cast<double>(w.tokens) / w.seconds;
  const double ms_per_step =
      1000.0 * w.seconds / static_cast<double>(std::max<std::int64_t>(w.steps, 1));
  if (!comm.is_root()) return;
  if (u.window_updates > 0) {
    sink.log("train/loss", step, u.loss);
    sink.log("train/nll", step, u.nll);
    sink.log("train/ppl", step, std::exp(u.nll));
  }
  sink.log("train/window_updates", step, static_cast<double>(u.window_updates));
  sink.log("train/window_tgt_tokens", step, static_cast<double>(u.window_tgt_tokens));
  if (u.tgt_tokens >= 0) sink.log("train/tokens", step, static_cast<double>(u.tgt_tokens));
  sink.log("train/lr", step, u.lr);
  sink.log("train/grad_norm", step, u.grad_norm);
  sink.log("train/skipped_updates", step, static_cast<double>(u.skipped_updates));
  sink.log("train/tokens_per_s", step, tok_s);
  sink.log("train/ms_per_step", step, ms_per_step);
  std::string memory;
  if (device.is_cuda()) {
    const double peak_gib =
        static_cast<double>(runtime::cuda_peak_memory_bytes(device.index())) / (1 << 30);
    sink.log("gpu/peak_memory_gib", step, peak_gib);
    memory = fmt::format(", peak {:.2f} GiB on {}", peak_gib, device.str());
  }
  spdlog::info("step {}: loss {:.3f}, ppl {:.2f}, lr {:.3g}, {:.0f} tokens/s, {:.0f} ms/step{}{}",
               step, u.loss, std::exp(u.nll), u.lr, tok_s, ms_per_step, memory,
               comm.size() > 1 ? fmt::format(" ({} ranks, {:.0f}% waiting on all-reduce)",
                                             comm.size(), 100.0 * w.allreduce_seconds / w.seconds)
                               : "");
}

}  // namespace nmt::train
