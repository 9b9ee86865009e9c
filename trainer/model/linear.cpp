// The affine map of the Transformer's layers and its int8 form for CPU decoding.
// Deviation from PyTorch's dynamic quantization: activations use the full 8-bit range where the
// CPU multiplies int8 with VNNI instructions (no 16-bit intermediate that could saturate), and
// PyTorch's reduced 7-bit range only on CPUs without them.

#include "trainer/model/linear.h"

#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/quantized/PackedParams.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/quantize_per_channel.h>
#include <ATen/ops/zeros.h>
#include <torch/nn/init.h>
#include <torch/utils.h>

#include <cmath>
#include <stdexcept>

namespace nmt::model {
namespace {

// Whether the CPU's int8 products go through a saturating 16-bit sum (x86 without VNNI): then
// activations are quantized to 7 bits so that two products cannot overflow it.
bool int8_products_saturate() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return !__builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

c10::intrusive_ptr<LinearPackedParamsBase> prepack(const at::Tensor& qweight,
                                                   const c10::optional<at::Tensor>& bias) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("quantized::linear_prepack", "")
                             .typed<c10::intrusive_ptr<LinearPackedParamsBase>(
                                 at::Tensor, c10::optional<at::Tensor>)>();
  return op.call(qweight, bias);
}

// One symmetric scale per row of an fp32 [rows, cols] matrix: max |row| / 127, so the row maps
// onto [-127, 127]. A zero row gets a tiny scale instead of 0, and quantizes to zeros.
torch::Tensor row_scales(const torch::Tensor& weight) {
  TORCH_CHECK(weight.dim() == 2 && weight.scalar_type() == at::kFloat,
              "int8 quantization takes an fp32 [rows, cols] matrix, got ", weight.sizes(), " ",
              weight.scalar_type());
  return weight.detach().abs().amax(1).div(127.0).clamp_min(1e-12);  // [rows]
}

}  // namespace

struct Int8Matrix::Packed {
  c10::intrusive_ptr<LinearPackedParamsBase> params;
  bool reduce_range = false;
};

Int8Rows quantize_rows(const torch::Tensor& weight) {
  torch::NoGradGuard no_grad;
  const auto scales = row_scales(weight);  // [rows]
  const auto values =
      weight.div(scales.unsqueeze(1)).round().clamp(-127, 127).to(at::kChar);  // [rows, cols]
  return {values, scales};
}

Int8Matrix::Int8Matrix(const torch::Tensor& weight, const torch::Tensor& bias)
    : rows_(weight.size(0)), cols_(weight.size(1)) {
  TORCH_CHECK(weight.device().is_cpu(), "int8 weights are for CPU decoding; the weight is on ",
              weight.device());
  if (at::globalContext().qEngine() == at::QEngine::NoQEngine) {
    throw std::runtime_error(
        "precision int8: this LibTorch has no quantized CPU engine (FBGEMM or oneDNN); decode "
        "with --precision fp32 or bf16");
  }
  torch::NoGradGuard no_grad;
  const auto scales = row_scales(weight).to(at::kDouble);  // [rows]
  const auto qweight = at::quantize_per_channel(
      weight.contiguous(), scales, at::zeros({rows_}, at::kLong), 0, at::kQInt8);  // [rows, cols]
  auto packed = std::make_shared<Packed>();
  packed->params =
      prepack(qweight, bias.defined() ? c10::optional<at::Tensor>(bias.detach().contiguous())
                                      : c10::optional<at::Tensor>());
  packed->reduce_range = int8_products_saturate();
  packed_ = std::move(packed);
  copies_ = at::globalContext().qEngine() == at::QEngine::ONEDNN ? 2 : 1;
}

torch::Tensor Int8Matrix::linear(const torch::Tensor& x) const {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == at::kFloat,
              "int8 linear layers take fp32 CPU input, got ", x.scalar_type(), " on ", x.device());
  TORCH_CHECK(x.dim() >= 1 && x.size(-1) == cols_, "int8 linear layer takes [..., ", cols_,
              "], got ", x.sizes());
  if (x.numel() == 0) {
    auto sizes = x.sizes().vec();
    sizes.back() = rows_;
    return at::empty(sizes, x.options());  // [..., out]
  }
  return packed_->params->apply_dynamic(x.contiguous(), packed_->reduce_range);  // [..., out]
}

LinearImpl::LinearImpl(std::int64_t in_features, std::int64_t out_features, bool bias) {
  weight = register_parameter("weight", at::empty({out_features, in_features}));
  this->bias = bias ? register_parameter("bias", at::empty({out_features}))
                    : register_parameter("bias", {}, /*requires_grad=*/false);
  // torch::nn::Linear's initialization, draw for draw: the same seed gives the same parameters.
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (this->bias.defined()) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
    torch::nn::init::uniform_(this->bias, -bound, bound);
  }
}

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
  if (int8_) return int8_->linear(x);            // [..., out]
  if (packed_) return packed_->linear(x, bias);  // [..., out]
  return at::linear(x, weight, bias);            // [..., out]
}

void LinearImpl::quantize_int8() {
  if (int8_) return;
  TORCH_CHECK(weight.device().is_cpu() && weight.scalar_type() == at::kFloat,
              "int8 quantization needs fp32 weights on the CPU, got ", weight.scalar_type(), " on ",
              weight.device());
  int8_.emplace(weight, bias);
  torch::NoGradGuard no_grad;
  weight.set_();  // the registered tensor too: its fp32 storage is freed
}

void LinearImpl::pack_fp32() {
  if (int8_ || packed_ || !runtime::PackedWeight::available()) return;
  packed_.emplace(weight);
  torch::NoGradGuard no_grad;
  weight.set_();  // the registered tensor too: its fp32 storage is freed
}

}  // namespace nmt::model
