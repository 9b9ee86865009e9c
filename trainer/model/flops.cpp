#include "trainer/model/flops.h"

namespace nmt::model {

double forward_flops(const ModelConfig& c, std::int64_t batch, std::int64_t src_len,
                     std::int64_t tgt_len) {
  const double d = static_cast<double>(c.d_model), qk = static_cast<double>(c.heads * c.d_k),
               v = static_cast<double>(c.heads * c.d_v), ff = static_cast<double>(c.d_ff);
  const double s = static_cast<double>(src_len), t = static_cast<double>(tgt_len);
  const double layers = static_cast<double>(c.layers);
  // Per position of the attending sequence: Q and output projections; per position of the
  // attended sequence: K and V projections; per (query, key) pair: scores and weighted values.
  const auto attention = [&](double queries, double keys) {
    return 2.0 * queries * (d * qk + v * d) + 2.0 * keys * (d * qk + d * v) +
           2.0 * queries * keys * (qk + v);
  };
  const auto ffn = [&](double positions) { return 2.0 * positions * 2.0 * d * ff; };
  const double encoder = layers * (attention(s, s) + ffn(s));
  const double decoder = layers * (attention(t, t) + attention(t, s) + ffn(t));
  const double projection = 2.0 * t * d * static_cast<double>(c.vocab_size);
  return static_cast<double>(batch) * (encoder + decoder + projection);
}

}  // namespace nmt::model
