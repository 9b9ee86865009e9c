#include "trainer/decode/greedy.h"

#include <ATen/ops/full.h>
#include <torch/utils.h>

#include <algorithm>

#include "preprocess/vocabulary.h"

namespace nmt::decode {

std::vector<std::vector<std::int64_t>> greedy_decode(model::Transformer& model,
                                                     const at::Tensor& src,
                                                     std::int64_t max_length) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  const auto batch = src.size(0);
  if (max_length < 0) max_length = src.size(1) + 50;
  max_length = std::min(max_length, model->config().max_positions - 1);
  const auto memory = model->encode(src);  // [batch, src_len, d_model]
  auto cache = model->start_decoding(memory, src);
  auto last = at::full({batch}, preprocess::kBosId, src.options());  // [batch]
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(batch));
  std::vector<bool> done(static_cast<std::size_t>(batch), false);
  std::int64_t remaining = batch;
  for (std::int64_t step = 0; step < max_length && remaining > 0; ++step) {
    last = model->decode_step(last, cache).argmax(-1);  // [batch]
    const auto tokens = last.to(at::kCPU);
    const auto* t = tokens.data_ptr<std::int64_t>();
    for (std::int64_t b = 0; b < batch; ++b) {
      const auto i = static_cast<std::size_t>(b);
      if (done[i]) continue;
      if (t[b] == preprocess::kEosId) {
        done[i] = true;
        --remaining;
      } else {
        out[i].push_back(t[b]);
      }
    }
  }
  if (was_training) model->train();
  return out;
}

}  // namespace nmt::decode
