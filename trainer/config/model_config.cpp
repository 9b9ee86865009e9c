#include "trainer/config/model_config.h"

#include <stdexcept>

#include "common/named_choices.h"

namespace nmt::model {
namespace {

constexpr NamedChoices<Positions, 2> kPositions{
    {{{Positions::kSinusoidal, "sinusoidal"}, {Positions::kLearned, "learned"}}}};
constexpr NamedChoices<NormPlacement, 2> kNorms{
    {{{NormPlacement::kPost, "post"}, {NormPlacement::kPre, "pre"}}}};
constexpr NamedChoices<EmbeddingSharing, 3> kSharing{{{{EmbeddingSharing::kAll, "all"},
                                                       {EmbeddingSharing::kDecoder, "decoder"},
                                                       {EmbeddingSharing::kNone, "none"}}}};

void require(bool ok, const char* field, const std::string& what) {
  if (!ok) throw std::invalid_argument(std::string("model.") + field + ": " + what);
}

}  // namespace

Positions parse_positions(const std::string& name) {
  return kPositions.parse(name, "positions");
}
NormPlacement parse_norm(const std::string& name) {
  return kNorms.parse(name, "norm");
}
EmbeddingSharing parse_embedding_sharing(const std::string& name) {
  return kSharing.parse(name, "embedding sharing");
}
const char* enum_name(Positions value) {
  return kPositions.name(value);
}
const char* enum_name(NormPlacement value) {
  return kNorms.name(value);
}
const char* enum_name(EmbeddingSharing value) {
  return kSharing.name(value);
}

void ModelConfig::validate() const {
  require(vocab_size >= 4, "vocab_size", "must be at least 4 (pad, unk, bos, eos)");
  require(layers >= 1, "layers", "must be positive");
  require(d_model >= 1 && d_ff >= 1, "d_model", "d_model and d_ff must be positive");
  require(heads >= 1 && d_k >= 1 && d_v >= 1, "heads", "heads, d_k and d_v must be positive");
  for (double p : {dropout, attention_dropout, ffn_dropout}) {
    require(p >= 0.0 && p < 1.0, "dropout", "dropout probabilities must be in [0, 1)");
  }
  require(max_positions >= 2, "max_positions", "must be at least 2");
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
  const std::int64_t matrices = embedding_sharing == EmbeddingSharing::kAll       ? 1
                                : embedding_sharing == EmbeddingSharing::kDecoder ? 2
                                                                                  : 3;
  std::int64_t total = layers * (encoder_layer + decoder_layer) + matrices * vocab_size * d;
  if (positions == Positions::kLearned) total += 2 * max_positions * d;  // one table per stack
  if (norm == NormPlacement::kPre) total += 2 * norm_params;  // final encoder and decoder norms
  return total;
}

}  // namespace nmt::model
