#pragma once
// The affine map y = x W^T + b of attention, feed-forward and output layers, with an int8 form for
// CPU decoding: weights quantized once per output row (symmetric scales), activations quantized
// per call (dynamic quantization) by LibTorch's own kernels (FBGEMM where LibTorch has it, else
// oneDNN; both through the quantized::linear_prepack operator).
//
// Registers "weight" [out, in] and "bias" [out] (undefined without a bias) and initializes them
// exactly as torch::nn::Linear does, so checkpoint keys and seeded models are the same as with it.

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include "trainer/runtime/packed_gemm.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace nmt::model {

// A weight matrix quantized to int8 and packed for the dynamic-quantization kernels (CPU only).
class Int8Matrix {
 public:
  // weight [out, in] fp32 on the CPU, bias [out] or undefined. Row r is stored as
  // round(weight[r] / scale[r]) with scale[r] = max |weight[r]| / 127.
  Int8Matrix(const torch::Tensor& weight, const torch::Tensor& bias);

  // x [..., in] fp32 -> [..., out] fp32
  torch::Tensor linear(const torch::Tensor& x) const;
  // Bytes of the packed weight, by its layout: one per weight (two with oneDNN, which keeps the
  // int8 matrix beside its packed form; FBGEMM does not) plus the per-row scale, zero point and
  // column offset (4 bytes each). The bias is the caller's tensor and not counted.
  std::int64_t bytes() const { return copies_ * rows_ * cols_ + rows_ * 12; }

 private:
  struct Packed;
  std::shared_ptr<const Packed> packed_;
  std::int64_t rows_ = 0, cols_ = 0;
  std::int64_t copies_ = 1;
};

// Rows of `weight` [rows, cols] fp32 quantized symmetrically: int8 [rows, cols] (kChar) and one
// fp32 scale per row [rows], so that row r is about int8[r] * scale[r].
struct Int8Rows {
  torch::Tensor values;  // [rows, cols] int8
  torch::Tensor scales;  // [rows] fp32
};
Int8Rows quantize_rows(const torch::Tensor& weight);

class LinearImpl : public torch::nn::Module {
 public:
  LinearImpl(std::int64_t in_features, std::int64_t out_features, bool bias = true);

  // x [..., in] -> [..., out]
  torch::Tensor forward(const torch::Tensor& x);

  // Switches to the int8 kernels for inference and releases the fp32 weight (it becomes an empty
  // tensor; the bias stays). CPU and fp32 only; no way back; gradients no longer flow.
  void quantize_int8();
  bool quantized() const { return int8_.has_value(); }

  // For fp32 decoding on a CPU: keeps the weight in the BLAS's packed layout
  // (runtime::PackedWeight) and releases the fp32 tensor as quantize_int8 does. Nothing happens
  // where the BLAS has no packed products (PackedWeight::available()) or the layer is quantized.
  void pack_fp32();
  bool packed() const { return packed_.has_value(); }
  // Bytes of the int8 or packed weight, which no registered tensor holds (0 before either).
  std::int64_t extra_bytes() const {
    return int8_ ? int8_->bytes() : packed_ ? packed_->bytes() : 0;
  }

  torch::Tensor weight;  // [out, in]; empty once quantized
  torch::Tensor bias;    // [out], or undefined

 private:
  std::optional<Int8Matrix> int8_;
  std::optional<runtime::PackedWeight> packed_;
};
TORCH_MODULE(Linear);

}  // namespace nmt::model
