// The Transformer of paper section 3: shapes, the paper's invariants (causality, padding
// invariance, the positional-encoding offset property), Table 3 parameter counts, incremental
// decoding against the full decoder, and the registered names that checkpoints depend on.

#include <ATen/ops/allclose.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/full.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <torch/nn/utils/clip_grad.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "preprocess/vocabulary.h"
#include "test_utils.h"
#include "trainer/model/attention.h"
#include "trainer/model/feed_forward.h"
#include "trainer/model/positional_encoding.h"
#include "trainer/model/transformer.h"

namespace nmt::model {
namespace {

using nmt::preprocess::kBosId;
using nmt::preprocess::kPadId;

void expect_tensor_near(const torch::Tensor& actual, const torch::Tensor& expected,
                        double tolerance, const std::string& what = "") {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  const double diff =
      (actual.to(at::kDouble) - expected.to(at::kDouble)).abs().max().item<double>();
  EXPECT_LE(diff, tolerance) << what << ": max |actual - expected| = " << diff;
}

// The same values computed through different batch shapes (padding, batching, one cached step
// instead of the whole prefix) go through different BLAS kernels and summation orders, so they
// agree only up to float32 rounding: a few ulps of the largest value (measured up to 1.2e-6 on
// logits of magnitude 3, with OpenBLAS and with MKL). This allows 1e-5 of the largest magnitude,
// about 80 ulps; a padding, masking or cache bug moves values by 1e-2 and more. The same bound
// holds on any CPU: these are fp32 products everywhere (AMX and AVX512-BF16 serve bf16 only), and
// AVX2 kernels (Zen 3) and AVX-512 ones (Xeon, Zen 4) differ only in summation order.
void expect_equal_up_to_rounding(const torch::Tensor& actual, const torch::Tensor& expected,
                                 const std::string& what) {
  const double scale = std::max(1.0, expected.abs().max().item<double>());
  expect_tensor_near(actual, expected, 1e-5 * scale, what);
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// vocab 50, two layers, per-head widths unrelated to d_model / heads (d_k 6, d_v 10).
ModelConfig tiny_config() {
  ModelConfig config;
  config.vocab_size = 50;
  config.layers = 2;
  config.d_model = 16;
  config.d_ff = 32;
  config.heads = 4;
  config.d_k = 6;
  config.d_v = 10;
  config.max_positions = 64;
  return config;
}

Transformer make_model(const ModelConfig& config, std::uint64_t seed = 7) {
  torch::manual_seed(seed);
  Transformer model(config);
  model->eval();
  return model;
}

// Rows of token ids, right-padded with kPadId to the longest: [rows, longest] int64.
torch::Tensor batch(const std::vector<std::vector<std::int64_t>>& rows) {
  std::size_t longest = 0;
  for (const auto& row : rows) longest = std::max(longest, row.size());
  std::vector<std::int64_t> flat;
  for (auto row : rows) {
    row.resize(longest, kPadId);
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return at::tensor(flat).view(
      {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(longest)});
}

// Non-special tokens [rows, len].
torch::Tensor random_tokens(std::int64_t rows, std::int64_t len, std::int64_t vocab) {
  return at::randint(4, vocab, {rows, len}, at::TensorOptions(at::kLong));
}

torch::Tensor append_pads(const torch::Tensor& tokens, std::int64_t count) {
  return at::cat({tokens, at::full({tokens.size(0), count}, kPadId, tokens.options())}, 1);
}

std::set<std::string> parameter_names(const torch::nn::Module& module) {
  std::set<std::string> names;
  for (const auto& item : module.named_parameters()) names.insert(item.key());
  return names;
}

std::int64_t numel_sum(const torch::nn::Module& module) {
  std::int64_t total = 0;
  for (const auto& parameter : module.parameters()) total += parameter.numel();
  return total;
}

TEST(Transformer, OutputShapes) {
  const auto config = tiny_config();
  auto model = make_model(config);
  const auto src = random_tokens(3, 7, config.vocab_size);
  const auto tgt = random_tokens(3, 5, config.vocab_size);
  const auto memory = model->encode(src);
  EXPECT_EQ(memory.sizes(), (std::vector<std::int64_t>{3, 7, 16}));
  const auto hidden = model->decode(tgt, memory, src);
  EXPECT_EQ(hidden.sizes(), (std::vector<std::int64_t>{3, 5, 16}));
  const auto logits = model->logits(hidden);
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{3, 5, 50}));
  EXPECT_EQ(logits.scalar_type(), at::kFloat);
  expect_tensor_near(model->forward(src, tgt), logits, 0.0, "forward = logits(decode(encode))");
}

TEST(Transformer, ConstructorValidatesConfig) {
  auto config = tiny_config();
  config.d_k = 0;
  NMT_EXPECT_THROW_WITH(Transformer{config}, std::invalid_argument, "model.heads", "positive");
  NMT_EXPECT_THROW_WITH(parse_norm("sandwich"), std::invalid_argument, "unknown norm 'sandwich'",
                        "expected post, pre");
}

TEST(Transformer, RejectsSequencesLongerThanMaxPositions) {
  const auto config = tiny_config();
  auto model = make_model(config);
  const auto too_long = random_tokens(1, config.max_positions + 1, config.vocab_size);
  NMT_EXPECT_THROW_WITH(model->encode(too_long), c10::Error, "max_positions");
}

TEST(Transformer, DecoderIsCausal) {
  for (const std::string norm : {"post", "pre"}) {
    auto config = tiny_config();
    config.norm = parse_norm(norm);
    auto model = make_model(config);
    const auto src = batch({{5, 6, 7, 8, 9}, {10, 11, 12}});
    const auto memory = model->encode(src);
    const auto tgt = random_tokens(2, 8, config.vocab_size);
    const auto hidden = model->decode(tgt, memory, src);  // [2, 8, d_model]
    for (std::int64_t i = 0; i + 1 < tgt.size(1); ++i) {
      auto changed = tgt.clone();
      // A different non-special token at every later position.
      changed.narrow(1, i + 1, tgt.size(1) - i - 1).sub_(4).add_(1).remainder_(46).add_(4);
      const auto other = model->decode(changed, memory, src);
      expect_tensor_near(other.narrow(1, 0, i + 1), hidden.narrow(1, 0, i + 1), 1e-6,
                         norm + ": prefix up to " + std::to_string(i));
      // The changed tokens do reach the positions that may see them.
      EXPECT_GT(max_abs_diff(other.select(1, i + 1), hidden.select(1, i + 1)), 1e-3) << norm;
    }
  }
}

TEST(Transformer, PaddingDoesNotChangeRealPositions) {
  for (const std::string norm : {"post", "pre"}) {
    auto config = tiny_config();
    config.norm = parse_norm(norm);
    auto model = make_model(config);
    const auto src = random_tokens(1, 5, config.vocab_size);
    const auto tgt = random_tokens(1, 6, config.vocab_size);
    const auto reference = model->forward(src, tgt);  // [1, 6, vocab]

    expect_equal_up_to_rounding(model->forward(append_pads(src, 4), tgt), reference,
                                norm + ": padded source");
    const auto padded_both = model->forward(append_pads(src, 3), append_pads(tgt, 2));
    expect_equal_up_to_rounding(padded_both.narrow(1, 0, 6), reference, norm + ": padded both");

    // A short sentence batched with a longer one gets the logits it gets alone.
    const auto long_src = random_tokens(1, 9, config.vocab_size);
    const auto long_tgt = random_tokens(1, 8, config.vocab_size);
    const auto both = model->forward(at::cat({append_pads(src, 4), long_src}),
                                     at::cat({append_pads(tgt, 2), long_tgt}));
    expect_equal_up_to_rounding(both[0].narrow(0, 0, 6), reference[0], norm + ": batched");
    expect_equal_up_to_rounding(both[1], model->forward(long_src, long_tgt)[0], norm + ": batched");

    // Sanity: a real source token does matter.
    auto other_src = src.clone();
    other_src[0][4] = (other_src[0][4].item<std::int64_t>() - 3) % 46 + 4;
    EXPECT_GT(max_abs_diff(model->forward(other_src, tgt), reference), 1e-4) << norm;
  }
}

TEST(Transformer, FullyPaddedSourceRowGivesFiniteOutputAndGradients) {
  const auto config = tiny_config();
  torch::manual_seed(3);
  Transformer model(config);
  model->train();
  const auto src = batch({{5, 6, 7}, {kPadId, kPadId, kPadId}});
  const auto tgt = batch({{kBosId, 8, 9, 10}, {kBosId, 11}});
  const auto logits = model->forward(src, tgt);
  EXPECT_TRUE(logits.isfinite().all().item<bool>());
  logits.sum().backward();
  for (const auto& item : model->named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_TRUE(item.value().grad().isfinite().all().item<bool>()) << item.key();
  }
}

TEST(Transformer, DropoutIsActiveOnlyInTraining) {
  auto config = tiny_config();
  config.dropout = 0.3;
  auto model = make_model(config);
  const auto src = random_tokens(2, 6, config.vocab_size);
  const auto tgt = random_tokens(2, 5, config.vocab_size);
  expect_tensor_near(model->forward(src, tgt), model->forward(src, tgt), 0.0, "eval");
  model->train();
  EXPECT_GT(max_abs_diff(model->forward(src, tgt), model->forward(src, tgt)), 1e-3);
}

TEST(Attention, WeightsAreTheScaledSoftmax) {
  torch::manual_seed(1);
  const auto q = at::randn({2, 3, 4, 5});  // [batch, heads, q_len, d_k]
  const auto k = at::randn({2, 3, 6, 5});  // [batch, heads, k_len, d_k]
  auto padding = at::zeros({2, 6}, at::TensorOptions(at::kBool));
  padding[1].narrow(0, 4, 2).fill_(true);
  const AttentionMask mask{padding, false};
  const auto weights = attention_weights(q, k, mask.blocked(4, 6, torch::kCPU));

  auto scores = q.matmul(k.transpose(-2, -1)) / std::sqrt(5.0);
  scores.select(0, 1).narrow(-1, 4, 2).fill_(-INFINITY);
  const auto expected = scores.exp() / scores.exp().sum(-1, true);
  expect_tensor_near(weights, expected, 1e-6, "softmax(QK^T / sqrt(d_k))");
  EXPECT_EQ(weights.select(0, 1).narrow(-1, 4, 2).abs().max().item<float>(), 0.0f);
}

TEST(Attention, FullyMaskedRowsAreZeroNotNaN) {
  const auto q = at::randn({1, 2, 3, 4}).requires_grad_(true);
  const auto k = at::randn({1, 2, 5, 4}).requires_grad_(true);
  const auto padding = at::ones({1, 5}, at::TensorOptions(at::kBool));
  const auto weights =
      attention_weights(q, k, AttentionMask{padding, false}.blocked(3, 5, q.device()));
  EXPECT_EQ(weights.abs().max().item<float>(), 0.0f);
  weights.sum().backward();
  EXPECT_TRUE(q.grad().isfinite().all().item<bool>());
  EXPECT_TRUE(k.grad().isfinite().all().item<bool>());
}

TEST(Attention, CausalMaskAlignsQueriesWithTheLastKeys) {
  const AttentionMask causal{torch::Tensor(), true};
  const auto square = causal.blocked(4, 4, torch::kCPU);
  const auto expected =
      at::tensor(std::vector<std::int64_t>{0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0})
          .view({4, 4})
          .to(at::kBool);
  EXPECT_TRUE(square.equal(expected));
  // Two new queries over six keys: the first sees keys 0..4, the second all six.
  auto step_expected = at::zeros({2, 6}, at::TensorOptions(at::kBool));
  step_expected[0][5] = true;
  EXPECT_TRUE(causal.blocked(2, 6, torch::kCPU).equal(step_expected));
}

TEST(Attention, HeadWidthsAreIndependentOfDModel) {
  torch::manual_seed(2);
  MultiHeadAttention attention(16, 4, 6, 10, 0.0);
  const auto params = attention->named_parameters();
  EXPECT_EQ(params["w_q.weight"].sizes(), (std::vector<std::int64_t>{24, 16}));
  EXPECT_EQ(params["w_k.weight"].sizes(), (std::vector<std::int64_t>{24, 16}));
  EXPECT_EQ(params["w_v.weight"].sizes(), (std::vector<std::int64_t>{40, 16}));
  EXPECT_EQ(params["w_o.weight"].sizes(), (std::vector<std::int64_t>{16, 40}));
  EXPECT_EQ(params["w_o.bias"].sizes(), (std::vector<std::int64_t>{16}));
  const auto x = at::randn({2, 5, 16});
  const auto y = at::randn({2, 7, 16});
  EXPECT_EQ(attention(x, y, AttentionMask{}).sizes(), (std::vector<std::int64_t>{2, 5, 16}));
}

TEST(FeedForward, IsLinearReluLinear) {
  torch::manual_seed(4);
  FeedForward ffn(8, 20, 0.0);
  const auto p = ffn->named_parameters();
  const auto x = at::randn({2, 3, 8});
  const auto inner = (x.matmul(p["linear1.weight"].t()) + p["linear1.bias"]).clamp_min(0);
  const auto expected = inner.matmul(p["linear2.weight"].t()) + p["linear2.bias"];
  expect_tensor_near(ffn(x), expected, 1e-5, "max(0, x W1 + b1) W2 + b2");
}

TEST(PositionalEncoding, MatchesTheClosedForm) {
  for (const std::int64_t d : {16, 7}) {
    const auto table = sinusoidal_encoding(100, d);  // [100, d]
    ASSERT_EQ(table.sizes(), (std::vector<std::int64_t>{100, d}));
    auto accessor = table.accessor<float, 2>();
    double worst = 0;
    for (std::int64_t pos = 0; pos < 100; ++pos) {
      for (std::int64_t j = 0; j < d; ++j) {
        const double angle = pos / std::pow(10000.0, static_cast<double>(j / 2 * 2) / d);
        const double expected = j % 2 == 0 ? std::sin(angle) : std::cos(angle);
        worst = std::max(worst, std::abs(accessor[pos][j] - expected));
      }
    }
    EXPECT_LT(worst, 1e-6) << "d_model " << d;
  }
}

TEST(PositionalEncoding, OffsetIsAFixedRotation) {
  const std::int64_t d = 16;
  const auto table = sinusoidal_encoding(300, d).to(at::kDouble);  // [300, d]
  for (const std::int64_t k : {1, 7, 30, 113}) {
    // Block-diagonal rotation: [sin(a + b), cos(a + b)] = [[cos b, sin b], [-sin b, cos b]]
    // [sin a, cos a] with b = w_i * k, independent of the position a.
    auto rotation = at::zeros({d, d}, at::TensorOptions(at::kDouble));
    for (std::int64_t i = 0; i < d / 2; ++i) {
      const double b = k * std::pow(10000.0, -2.0 * i / d);
      rotation[2 * i][2 * i] = std::cos(b);
      rotation[2 * i][2 * i + 1] = std::sin(b);
      rotation[2 * i + 1][2 * i] = -std::sin(b);
      rotation[2 * i + 1][2 * i + 1] = std::cos(b);
    }
    for (const std::int64_t pos : {0, 3, 42, 150}) {
      expect_tensor_near(table[pos + k], rotation.matmul(table[pos]), 1e-5,
                         "PE[" + std::to_string(pos) + " + " + std::to_string(k) + "]");
    }
  }
}

TEST(PositionalEncoding, SinusoidsAreABufferAndLearnedPositionsAParameter) {
  auto config = tiny_config();
  PositionalEncoding fixed(config);
  EXPECT_TRUE(fixed->parameters().empty());
  ASSERT_EQ(fixed->named_buffers().size(), 1u);
  expect_tensor_near(fixed->named_buffers()["weight"], sinusoidal_encoding(64, 16), 0.0, "table");
  // The same table, so the same rounding: exactly rows 5..7.
  expect_tensor_near(fixed(5, 3), sinusoidal_encoding(64, 16).narrow(0, 5, 3), 0.0, "rows 5..7");

  config.positions = Positions::kLearned;
  PositionalEncoding learned(config);
  ASSERT_EQ(learned->named_parameters().size(), 1u);
  EXPECT_EQ(learned->named_parameters()["weight"].sizes(), (std::vector<std::int64_t>{64, 16}));
  EXPECT_TRUE(learned->named_buffers().is_empty());
}

struct Table3Row {
  std::string name;
  ModelConfig config;
  std::int64_t published = 0;  // the exact figure of PAPER.md; 0 where it gives none
};

std::vector<Table3Row> table3_rows() {
  const ModelConfig base;  // the defaults are the base model, vocabulary 37000
  const auto row = [&](const std::string& name, auto change, std::int64_t published = 0) {
    ModelConfig config = base;
    change(config);
    return Table3Row{name, config, published};
  };
  const auto heads = [](std::int64_t h, std::int64_t d) {
    return [=](ModelConfig& c) { c.heads = h, c.d_k = d, c.d_v = d; };
  };
  return {
      row(
          "base", [](ModelConfig&) {}, 63082496),
      row("A h=1", heads(1, 512)),
      row("A h=4", heads(4, 128)),
      row("A h=16", heads(16, 32)),
      row("A h=32", heads(32, 16)),
      row(
          "B d_k=16", [](ModelConfig& c) { c.d_k = 16; }, 55990784),
      row("B d_k=32", [](ModelConfig& c) { c.d_k = 32; }),
      row(
          "C N=2", [](ModelConfig& c) { c.layers = 2; }, 33656832),
      row("C N=4", [](ModelConfig& c) { c.layers = 4; }),
      row("C N=8", [](ModelConfig& c) { c.layers = 8; }),
      row(
          "C d_model=256", [](ModelConfig& c) { c.d_model = 256, c.d_k = c.d_v = 32; }, 26834944),
      row(
          "C d_model=1024", [](ModelConfig& c) { c.d_model = 1024, c.d_k = c.d_v = 128; },
          163889152),
      row("C d_ff=1024", [](ModelConfig& c) { c.d_ff = 1024; }),
      row("C d_ff=4096", [](ModelConfig& c) { c.d_ff = 4096; }),
      row("D P_drop=0.0", [](ModelConfig& c) { c.dropout = 0.0; }),
      row("D P_drop=0.2", [](ModelConfig& c) { c.dropout = 0.2; }),
      row("D eps_ls=0.0", [](ModelConfig&) {}),  // label smoothing: not a model parameter
      row("D eps_ls=0.2", [](ModelConfig&) {}),
      row("E learned positions", [](ModelConfig& c) { c.positions = Positions::kLearned; }),
      row(
          "big",
          [](ModelConfig& c) {
            c.d_model = 1024, c.d_ff = 4096, c.heads = 16, c.d_k = c.d_v = 64, c.dropout = 0.3;
          },
          214245376),
  };
}

TEST(ParameterCount, FormulaGivesThePublishedFigures) {
  int checked = 0;
  for (const auto& row : table3_rows()) {
    if (row.published == 0) continue;
    EXPECT_EQ(row.config.expected_parameter_count(), row.published) << row.name;
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST(ParameterCount, BuiltTable3ModelsMatchFormulaAndPaper) {
  for (const auto& row : table3_rows()) {
    std::int64_t counted = 0, distinct = 0;
    {
      const Transformer model(row.config);  // one at a time: big is ~0.9 GB of floats
      counted = numel_sum(*model);
      distinct = model->parameter_count();
    }
    EXPECT_EQ(counted, distinct) << row.name << ": a parameter is registered twice";
    EXPECT_EQ(counted, row.config.expected_parameter_count()) << row.name;
    if (row.published != 0) {
      EXPECT_EQ(counted, row.published) << row.name;
    }
  }
}

TEST(Transformer, EmbeddingSharingVariants) {
  struct Variant {
    std::string sharing;
    std::vector<std::string> present, absent;
    std::string projection;
  };
  const std::vector<Variant> variants = {
      {"all",
       {"embedding.weight"},
       {"src_embedding.weight", "output_projection.weight"},
       "embedding.weight"},
      {"decoder",
       {"src_embedding.weight", "tgt_embedding.weight"},
       {"embedding.weight", "output_projection.weight"},
       "tgt_embedding.weight"},
      {"none",
       {"src_embedding.weight", "tgt_embedding.weight", "output_projection.weight"},
       {"embedding.weight", "output_projection.bias"},
       "output_projection.weight"},
  };
  for (const auto& variant : variants) {
    auto config = tiny_config();
    config.embedding_sharing = parse_embedding_sharing(variant.sharing);
    auto model = make_model(config);
    EXPECT_EQ(numel_sum(*model), config.expected_parameter_count()) << variant.sharing;
    const auto names = parameter_names(*model);
    for (const auto& name : variant.present) EXPECT_EQ(names.count(name), 1u) << name;
    for (const auto& name : variant.absent) EXPECT_EQ(names.count(name), 0u) << name;

    const auto hidden = at::randn({2, 3, 16});
    const auto weight = model->named_parameters()[variant.projection];
    expect_tensor_near(model->logits(hidden), hidden.matmul(weight.t()), 1e-5,
                       variant.sharing + ": projection by " + variant.projection);
    const auto src = random_tokens(2, 4, config.vocab_size);
    EXPECT_EQ(model->forward(src, src).sizes(), (std::vector<std::int64_t>{2, 4, 50}));
  }
}

TEST(Transformer, SharedEmbeddingFeedsBothStacksAndTheProjection) {
  auto config = tiny_config();
  auto model = make_model(config);
  const auto weight = model->named_parameters()["embedding.weight"];
  const auto src = random_tokens(1, 3, config.vocab_size);
  const auto tgt = random_tokens(1, 2, config.vocab_size);
  const auto memory = model->encode(src);
  // Not a plain sum: both stacks end in a LayerNorm, whose output (gain 1 at initialization)
  // sums to the sum of its bias whatever its input, so the gradient of sum() is exactly zero and
  // only rounding noise would be left. A fixed random weight per element gives a loss whose
  // gradient is not zero.
  const auto loss_of = [](const torch::Tensor& y) { return (y * at::randn(y.sizes())).sum(); };
  // Each path alone puts a gradient on the one matrix: encoder input, decoder input, projection.
  const std::vector<std::pair<std::string, torch::Tensor>> paths = {
      {"encoder", loss_of(memory)},
      {"decoder", loss_of(model->decode(tgt, memory.detach(), src))},
      {"projection", loss_of(model->logits(at::randn({2, 16})))},
  };
  for (const auto& [path, loss] : paths) {
    model->zero_grad();
    loss.backward();
    ASSERT_TRUE(weight.grad().defined()) << path;
    // Tens and more here; rounding noise would be far below 1e-2.
    EXPECT_GT(weight.grad().abs().sum().item<double>(), 1e-2) << path;
  }
  ScaledEmbedding embedding(10, 16);
  const auto tokens = batch({{1, 2, 3}});
  expect_tensor_near(embedding(tokens)[0], embedding->weight().index_select(0, tokens[0]) * 4.0,
                     1e-6, "embedding * sqrt(16)");
}

TEST(Transformer, PreNormBuildsWithFinalNorms) {
  auto config = tiny_config();
  config.norm = NormPlacement::kPre;
  auto model = make_model(config);
  EXPECT_EQ(numel_sum(*model), config.expected_parameter_count());
  const auto names = parameter_names(*model);
  for (const char* name :
       {"encoder.norm.weight", "encoder.norm.bias", "decoder.norm.weight", "decoder.norm.bias"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
  const auto src = random_tokens(2, 5, config.vocab_size);
  const auto tgt = random_tokens(2, 4, config.vocab_size);
  const auto memory = model->encode(src);
  const auto hidden = model->decode(tgt, memory, src);
  // The final LayerNorm (gain 1, bias 0 at initialization) standardizes every position.
  expect_tensor_near(hidden.mean(-1), at::zeros({2, 4}), 1e-5, "mean over d_model");
  expect_tensor_near(memory.var(-1, false), at::ones({2, 5}), 1e-3, "variance over d_model");
  EXPECT_TRUE(model->forward(src, tgt).isfinite().all().item<bool>());

  config.norm = NormPlacement::kPost;
  const auto post_names = parameter_names(*make_model(config));
  EXPECT_EQ(post_names.count("encoder.norm.weight"), 0u);
  EXPECT_EQ(post_names.count("decoder.norm.weight"), 0u);
}

// Batch with source padding (lengths 7, 4, 1) and a target row ending in padding.
void check_incremental_decoding(const ModelConfig& config, const std::string& what) {
  auto model = make_model(config, 11);
  const auto src = batch({{5, 6, 7, 8, 9, 10, 11}, {12, 13, 14, 15}, {16}});
  const auto tgt = batch({{kBosId, 20, 21, 22, 23, 24},
                          {kBosId, 25, 26, 27, 28, 29},
                          {kBosId, 30, 31, kPadId, kPadId, kPadId}});
  const auto memory = model->encode(src);
  const auto full = model->logits(model->decode(tgt, memory, src));  // [3, 6, vocab]
  auto cache = model->start_decoding(memory, src);
  ASSERT_EQ(cache.layers.size(), static_cast<std::size_t>(config.layers));
  for (std::int64_t t = 0; t < tgt.size(1); ++t) {
    EXPECT_EQ(cache.length(), t);
    const auto step = model->decode_step(tgt.select(1, t), cache);  // [3, vocab]
    expect_equal_up_to_rounding(step, full.select(1, t), what + ": position " + std::to_string(t));
  }
  EXPECT_EQ(cache.layers[1].self.keys.sizes(),
            (std::vector<std::int64_t>{3, config.heads, 6, config.d_k}));
  EXPECT_EQ(cache.layers[1].cross.values.sizes(),
            (std::vector<std::int64_t>{3, config.heads, 7, config.d_v}));
}

TEST(Transformer, IncrementalDecodingMatchesFullDecode) {
  check_incremental_decoding(tiny_config(), "post-norm, sinusoids, shared");
  auto config = tiny_config();
  config.norm = NormPlacement::kPre;
  config.positions = Positions::kLearned;
  config.embedding_sharing = EmbeddingSharing::kNone;
  check_incremental_decoding(config, "pre-norm, learned positions, unshared");
}

TEST(DecoderCache, ReorderPicksRows) {
  const auto config = tiny_config();
  auto model = make_model(config);
  const auto src = batch({{5, 6, 7, 8}, {9, 10}, {11, 12, 13}});
  const auto tgt = batch({{kBosId, 20, 21}, {kBosId, 22, 23}, {kBosId, 24, 25}});
  auto cache = model->start_decoding(model->encode(src), src);
  model->decode_step(tgt.select(1, 0), cache);
  model->decode_step(tgt.select(1, 1), cache);
  const auto keys = cache.layers[0].self.keys.clone();      // [3, heads, 2, d_k]
  const auto cross = cache.layers[1].cross.values.clone();  // [3, heads, 4, d_v]

  const auto rows = at::tensor(std::vector<std::int64_t>{2, 0, 0, 1});
  cache.reorder(rows);
  EXPECT_EQ(cache.batch_size(), 4);
  EXPECT_EQ(cache.length(), 2);
  expect_tensor_near(cache.layers[0].self.keys, keys.index_select(0, rows), 0.0, "self keys");
  expect_tensor_near(cache.layers[1].cross.values, cross.index_select(0, rows), 0.0, "cross");
  EXPECT_TRUE(cache.src_padding.equal(padding_mask(src).index_select(0, rows)));

  // Decoding on from the reordered cache is decoding the reordered batch.
  const auto picked_src = src.index_select(0, rows);
  const auto picked_tgt = tgt.index_select(0, rows);
  const auto full = model->forward(picked_src, picked_tgt);  // [4, 3, vocab]
  expect_equal_up_to_rounding(model->decode_step(picked_tgt.select(1, 2), cache), full.select(1, 2),
                              "step after reorder");
}

// Beam search's layout: each source decoded by several target rows that share its
// cross-attention keys/values (never expanded), reordered within their sources at each step, and
// a finished source dropped with its rows; decoded longer than the self-attention cache's first
// allocation, so it grows while keeping what it holds.
TEST(DecoderCache, RowsShareTheirSourceAndGrowInPlace) {
  const auto config = tiny_config();
  auto model = make_model(config, 13);
  const auto src = batch({{5, 6, 7, 8, 9}, {10, 11}, {12, 13, 14}});  // [3, 5]
  constexpr std::int64_t kRows = 2;                                   // per source
  constexpr std::int64_t kSteps = 24;
  torch::manual_seed(14);
  auto tgt = at::randint(4, config.vocab_size, {3 * kRows, kSteps}, at::kLong);  // [6, 24]
  tgt.select(1, 0).fill_(kBosId);
  const auto memory = model->encode(src);  // [3, 5, d_model]
  auto cache = model->start_decoding(memory, src, kRows);
  EXPECT_EQ(cache.batch_size(), 3 * kRows);
  EXPECT_EQ(cache.sources(), 3);
  // Row r decodes source r / kRows: the expanded batch is the reference.
  const auto expand = at::arange(3, at::kLong).repeat_interleave(kRows);  // [6]
  auto rows_src = src.index_select(0, expand);                            // [6, 5]
  auto rows_tgt = tgt;                                                    // [6, 24]
  for (std::int64_t t = 0; t < kSteps; ++t) {
    if (t == 9) {  // each row continues another row of its source
      const auto within = at::tensor(std::vector<std::int64_t>{1, 1, 3, 2, 4, 4});
      cache.reorder(within);
      rows_src = rows_src.index_select(0, within);
      rows_tgt = at::cat(
          {rows_tgt.index_select(0, within).narrow(1, 0, t), rows_tgt.narrow(1, t, kSteps - t)}, 1);
    }
    if (t == 15) {  // source 1 is done: its rows leave, sources 2 and 0 stay (in that order)
      const auto rows = at::tensor(std::vector<std::int64_t>{4, 5, 1, 0});
      cache.reorder(rows, at::tensor(std::vector<std::int64_t>{2, 0}));
      EXPECT_EQ(cache.sources(), 2);
      EXPECT_EQ(cache.layers[0].cross.keys.size(0), 2);
      rows_src = rows_src.index_select(0, rows);
      rows_tgt = rows_tgt.index_select(0, rows);
    }
    const auto full = model->forward(rows_src, rows_tgt.narrow(1, 0, t + 1));  // [rows, t+1, V]
    expect_equal_up_to_rounding(model->decode_step(rows_tgt.select(1, t), cache), full.select(1, t),
                                "position " + std::to_string(t));
    EXPECT_EQ(cache.layers[1].cross.values.size(0), cache.sources());  // never expanded
  }
  EXPECT_EQ(cache.layers[1].self.keys.sizes(),
            (std::vector<std::int64_t>{4, config.heads, kSteps, config.d_k}));
}

TEST(Transformer, StableParameterNames) {
  auto config = tiny_config();
  auto model = make_model(config);
  const auto params = model->named_parameters();
  const auto names = parameter_names(*model);
  for (const char* name :
       {"embedding.weight", "encoder.layers.0.self_attn.w_q.weight",
        "encoder.layers.0.self_attn.w_k.bias", "encoder.layers.0.self_attn.w_v.weight",
        "encoder.layers.1.self_attn.w_o.bias", "encoder.layers.0.ffn.linear1.weight",
        "encoder.layers.1.ffn.linear2.bias", "encoder.layers.0.norm1.weight",
        "encoder.layers.1.norm2.bias", "decoder.layers.0.self_attn.w_q.weight",
        "decoder.layers.1.cross_attn.w_o.bias", "decoder.layers.1.cross_attn.w_k.weight",
        "decoder.layers.0.ffn.linear1.bias", "decoder.layers.0.norm1.weight",
        "decoder.layers.1.norm2.weight", "decoder.layers.1.norm3.bias"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
  EXPECT_EQ(names.count("encoder.layers.2.self_attn.w_q.weight"), 0u);
  EXPECT_EQ(params["embedding.weight"].sizes(), (std::vector<std::int64_t>{50, 16}));
  EXPECT_EQ(params["decoder.layers.1.cross_attn.w_v.weight"].sizes(),
            (std::vector<std::int64_t>{40, 16}));
  // Sinusoids are buffers, never counted; learned positions are parameters.
  EXPECT_EQ(names.count("encoder_positions.weight"), 0u);
  EXPECT_EQ(model->named_buffers().contains("decoder_positions.weight"), true);
  config.positions = Positions::kLearned;
  const auto learned = parameter_names(*make_model(config));
  EXPECT_EQ(learned.count("encoder_positions.weight"), 1u);
  EXPECT_EQ(learned.count("decoder_positions.weight"), 1u);
}

TEST(Transformer, InitializationFollowsTheDocumentedScheme) {
  auto config = tiny_config();
  config.vocab_size = 2000;  // enough samples to estimate the embedding's spread
  auto model = make_model(config);
  for (const auto& item : model->named_parameters()) {
    const auto& name = item.key();
    const auto& value = item.value();
    const bool linear =
        name.find(".w_") != std::string::npos || name.find(".linear") != std::string::npos;
    if (linear && value.dim() == 2) {
      // Xavier uniform: |w| <= sqrt(6 / (fan_in + fan_out)).
      const double bound = std::sqrt(6.0 / static_cast<double>(value.size(0) + value.size(1)));
      EXPECT_LE(value.abs().max().item<double>(), bound + 1e-7) << name;
      EXPECT_GT(value.abs().max().item<double>(), 0.8 * bound) << name;
    } else if (linear) {
      EXPECT_EQ(value.abs().max().item<double>(), 0.0) << name << ": biases start at zero";
    }
  }
  const double spread = model->named_parameters()["embedding.weight"].std().item<double>();
  EXPECT_NEAR(spread, 0.25, 0.01) << "N(0, d_model^-0.5) with d_model 16";
}

}  // namespace
}  // namespace nmt::model
