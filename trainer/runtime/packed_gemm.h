#pragma once
// A weight matrix stored once in the BLAS's own packed layout, for fp32 inference on the CPU:
// x · Wᵀ (+ b) without re-packing W at every call. An ordinary GEMM copies W into its blocked
// layout on each call; in decoding, where each call has few rows (the batch's beams) and W is
// large (the vocabulary's projection), that copy costs about as much as the product itself.
// Uses MKL's packed GEMM (cblas_sgemm_pack, cblas_sgemm_compute), looked up at run time in the
// MKL that PyPI's LibTorch links; where the loaded BLAS has none (Debian's LibTorch on OpenBLAS),
// available() is false and callers keep the plain product.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

namespace nmt::runtime {

class PackedWeight {
 public:
  // Whether this process's BLAS offers packed products (the same answer for every call).
  static bool available();

  // weight [out, in] fp32 on the CPU (any strides). Throws std::runtime_error when !available().
  explicit PackedWeight(const at::Tensor& weight);

  // x [..., in] fp32 CPU, bias [out] or undefined -> [..., out]: x · weightᵀ + bias, in the
  // BLAS's own threads (configure_cpu_threads).
  at::Tensor linear(const at::Tensor& x, const at::Tensor& bias) const;

  // Bytes of the packed copy (the BLAS's layout, about the weight's own size).
  std::int64_t bytes() const { return static_cast<std::int64_t>(bytes_); }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }

 private:
  std::shared_ptr<float> packed_;  // the BLAS's buffer, freed with std::free
  std::size_t bytes_ = 0;
  std::int64_t rows_ = 0, cols_ = 0;
};

}  // namespace nmt::runtime
