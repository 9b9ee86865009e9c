#include "trainer/decode/recomputed_steps.h"

#include <ATen/ops/tensor.h>

#include "preprocess/vocabulary.h"

namespace nmt::decode {
namespace {

class RecomputedSteps : public DecoderSteps {
 public:
  RecomputedSteps(model::Transformer& model, const at::Tensor& memory, const at::Tensor& src,
                  std::int64_t K)
      : model_(model), memory_(memory), src_(src), K_(K) {}

  at::Tensor logits(const at::Tensor& last,
                    const std::vector<std::vector<std::int64_t>>& prefixes) override {
    const auto length = static_cast<std::int64_t>(prefixes.front().size()) + 1;  // with BOS
    std::vector<std::int64_t> ids;
    for (const auto& tokens : prefixes) {
      ids.push_back(preprocess::kBosId);
      ids.insert(ids.end(), tokens.begin(), tokens.end());
    }
    const auto tgt = at::tensor(ids, at::TensorOptions().dtype(at::kLong))
                         .to(last.device())
                         .reshape({-1, length});           // [slots, length]
    const auto memory = memory_.repeat_interleave(K_, 0);  // [slots, src_len, d_model]
    const auto src = src_.repeat_interleave(K_, 0);        // [slots, src_len]
    return model_->logits(model_->decode(tgt, memory, src).select(1, length - 1));  // [slots, V]
  }

  // The prefixes say all there is of the beams; only the sentences searched change.
  void reorder(const at::Tensor&, const at::Tensor* kept) override {
    if (kept == nullptr) return;
    memory_ = memory_.index_select(0, *kept);  // [sentences, src_len, d_model]
    src_ = src_.index_select(0, *kept);        // [sentences, src_len]
  }

 private:
  model::Transformer& model_;
  at::Tensor memory_;  // [sentences, src_len, d_model]
  at::Tensor src_;     // [sentences, src_len]
  std::int64_t K_;
};

}  // namespace

std::unique_ptr<DecoderSteps> recomputed_steps(model::Transformer& model, const at::Tensor& memory,
                                               const at::Tensor& src, std::int64_t K) {
  return std::make_unique<RecomputedSteps>(model, memory, src, K);
}

}  // namespace nmt::decode
