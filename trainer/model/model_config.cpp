#include "trainer/model/model_config.h"

#include <stdexcept>

namespace nmt::model {
namespace {

void require(bool ok, const char* field, const std::string& what) {
  if (!ok) throw std::invalid_argument(std::string("model.") + field + ": " + what);
}

}  // namespace

void ModelConfig::validate() const {
  require(vocab_size >= 4, "vocab_size", "must be at least 4 (pad, unk, bos, eos)");
  require(layers >= 1, "layers", "must be positive");
  require(d_model >= 1 && d_ff >= 1, "d_model", "d_model and d_ff must be positive");
  require(heads >= 1 && d_k >= 1 && d_v >= 1, "heads", "heads, d_k and d_v must be positive");
  for (double p : {dropout, attention_dropout, ffn_dropout}) {
    require(p >= 0.0 && p < 1.0, "dropout", "dropout probabilities must be in [0, 1)");
  }
  require(positions == "sinusoidal" || positions == "learned", "positions",
          "expected 'sinusoidal' or 'learned', got '" + positions + "'");
  require(max_positions >= 2, "max_positions", "must be at least 2");
  require(norm == "post" || norm == "pre", "norm", "expected 'post' or 'pre', got '" + norm + "'");
  require(
      embedding_sharing == "all" || embedding_sharing == "decoder" || embedding_sharing == "none",
      "embedding_sharing", "expected 'all', 'decoder' or 'none', got '" + embedding_sharing + "'");
  require(layer_norm_eps > 0, "layer_norm_eps", "must be positive");
}

std::int64_t ModelConfig::expected_parameter_count() const {
  const std::int64_t d = d_model;
  const std::int64_t qk = heads * d_k, v = heads * d_v;
  // W^Q, W^K: d x h*d_k; W^V: d x h*d_v; W^O: h*d_v x d; each with a bias.
  const std::int64_t attention = 2 * (d * qk + qk) + (d * v + v) + (v * d + d);
  const std::int64_t ffn = (d * d_ff + d_ff) + (d_ff * d + d);
  const std::int64_t norm_params = 2 * d;  // gain and bias
  const std::int64_t encoder_layer = attention + ffn + 2 * norm_params;
  const std::int64_t decoder_layer = 2 * attention + ffn + 3 * norm_params;
  const std::int64_t matrices = embedding_sharing == "all"       ? 1
                                : embedding_sharing == "decoder" ? 2
                                                                 : 3;
  std::int64_t total = layers * (encoder_layer + decoder_layer) + matrices * vocab_size * d;
  if (positions == "learned") total += 2 * max_positions * d;  // one table per stack
  if (norm == "pre") total += 2 * norm_params;                 // final encoder and decoder norms
  return total;
}

}  // namespace nmt::model
