// Positional encoding (paper section 3.5). Sinusoids are computed in double precision so that
// large positions keep float accuracy; learned tables start as N(0, d_model^-0.5), the same scale
// as the token embeddings before their sqrt(d_model) factor.

#include "trainer/model/positional_encoding.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/exp.h>
#include <torch/nn/init.h>

#include <cmath>

namespace nmt::model {

torch::Tensor sinusoidal_encoding(std::int64_t length, std::int64_t d_model) {
  TORCH_CHECK(length >= 0 && d_model >= 1, "sinusoidal_encoding: bad size ", length, " x ",
              d_model);
  const auto f64 = at::TensorOptions(at::kDouble);
  const auto positions = at::arange(length, f64).unsqueeze(1);  // [length, 1]
  const auto two_i = at::arange(0, d_model, 2, f64);            // [ceil(d_model / 2)]
  // w_i = 10000^(-2i / d_model)
  const auto frequencies = at::exp(two_i * (-std::log(10000.0) / static_cast<double>(d_model)));
  const auto angles = positions * frequencies;  // [length, ceil(d_model / 2)]
  auto table = at::empty({length, d_model}, f64);
  table.slice(1, 0, d_model, 2).copy_(angles.sin());
  table.slice(1, 1, d_model, 2).copy_(angles.cos().slice(1, 0, d_model / 2));
  return table.to(at::kFloat);  // [length, d_model]
}

PositionalEncodingImpl::PositionalEncodingImpl(const ModelConfig& config)
    : learned_(config.positions == Positions::kLearned) {
  if (learned_) {
    weight_ = register_parameter("weight", at::empty({config.max_positions, config.d_model}));
    torch::nn::init::normal_(weight_, 0.0, std::pow(static_cast<double>(config.d_model), -0.5));
  } else {
    weight_ = register_buffer("weight", sinusoidal_encoding(config.max_positions, config.d_model));
  }
}

torch::Tensor PositionalEncodingImpl::forward(std::int64_t start, std::int64_t length) {
  TORCH_CHECK(start >= 0 && start + length <= weight_.size(0), "positions ", start, "..",
              start + length - 1, " exceed model.max_positions = ", weight_.size(0),
              "; raise it or shorten the batch");
  return weight_.narrow(0, start, length);  // [length, d_model]
}

}  // namespace nmt::model
