#include "trainer/train/batch_loss.h"

#include <algorithm>

#include "preprocess/vocabulary.h"
#include "trainer/runtime/precision.h"

namespace nmt::train {

std::int64_t output_chunk_rows(std::int64_t vocab_size) {
  const auto row_bytes = std::max<std::int64_t>(vocab_size, 1) * std::int64_t{sizeof(float)};
  return std::max<std::int64_t>(kOutputChunkBytes / row_bytes, 1);
}

optim::LossTerms batch_loss(model::Transformer& model, const at::Tensor& src,
                            const at::Tensor& tgt_in, const at::Tensor& tgt_out,
                            double label_smoothing, runtime::Precision precision) {
  const auto hidden = model->decode(tgt_in, model->encode(src), src);  // [batch, tgt_len, d_model]
  const auto& weight = model->output_weight();                         // [vocab, d_model]
  return optim::output_layer_loss(hidden.reshape({-1, hidden.size(-1)}), weight,
                                  tgt_out.reshape({-1}), label_smoothing, preprocess::kPadId,
                                  runtime::matmul_type(precision, weight.scalar_type()),
                                  output_chunk_rows(weight.size(0)));
}

}  // namespace nmt::train
