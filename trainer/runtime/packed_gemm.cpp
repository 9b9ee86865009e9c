#include "trainer/runtime/packed_gemm.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>

namespace nmt::runtime {
namespace {

// CBLAS's enumerations as MKL's mkl_cblas.h numbers them; MKL_INT is int in the LP64 interface
// LibTorch links.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112, kPacked = 151, kBMatrix = 162;

using PackGetSize = std::size_t (*)(int identifier, int m, int n, int k);
using Pack = void (*)(int layout, int identifier, int trans, int m, int n, int k, float alpha,
                      const float* src, int ld, float* dest);
using Compute = void (*)(int layout, int transa, int transb, int m, int n, int k, const float* a,
                         int lda, const float* b, int ldb, float beta, float* c, int ldc);

struct PackedApi {
  PackGetSize get_size = nullptr;
  Pack pack = nullptr;
  Compute compute = nullptr;
  bool found() const { return get_size != nullptr && pack != nullptr && compute != nullptr; }
};

const PackedApi& api() {
  static const PackedApi found = [] {
    PackedApi api;
    api.get_size = reinterpret_cast<PackGetSize>(dlsym(RTLD_DEFAULT, "cblas_sgemm_pack_get_size"));
    api.pack = reinterpret_cast<Pack>(dlsym(RTLD_DEFAULT, "cblas_sgemm_pack"));
    api.compute = reinterpret_cast<Compute>(dlsym(RTLD_DEFAULT, "cblas_sgemm_compute"));
    return api;
  }();
  return found;
}

// The rows of the products the packing is laid out for; MKL's packed B serves any row count
// (PackedGemm.ProductsEqualThePlainOnesForAnyRowCount checks it for this MKL).
constexpr int kRowsHint = 256;

int as_int(std::int64_t value, const char* what) {
  TORCH_CHECK(value >= 0 && value <= INT32_MAX, "packed GEMM: ", what, " ", value,
              " does not fit MKL's 32-bit sizes");
  return static_cast<int>(value);
}

}  // namespace

bool PackedWeight::available() {
  return api().found();
}

PackedWeight::PackedWeight(const at::Tensor& weight) {
  if (!available()) throw std::runtime_error("this process's BLAS has no packed GEMM");
  TORCH_CHECK(weight.dim() == 2 && weight.device().is_cpu() && weight.scalar_type() == at::kFloat,
              "a packed weight is an fp32 CPU matrix, got ", weight.scalar_type(), " ",
              weight.sizes(), " on ", weight.device());
  const auto source = weight.contiguous();  // [out, in]
  rows_ = source.size(0);
  cols_ = source.size(1);
  const int n = as_int(rows_, "rows"), k = as_int(cols_, "columns");
  bytes_ = api().get_size(kBMatrix, kRowsHint, n, k);
  const std::size_t aligned = (bytes_ + 63) / 64 * 64;
  auto* buffer = static_cast<float*>(std::aligned_alloc(64, aligned == 0 ? 64 : aligned));
  if (buffer == nullptr) throw std::bad_alloc();
  packed_.reset(buffer, [](float* p) { std::free(p); });
  // op(B) = weightᵀ [in, out] from the row-major [out, in] weight.
  api().pack(kRowMajor, kBMatrix, kTrans, kRowsHint, n, k, 1.0f, source.data_ptr<float>(), k,
             packed_.get());
}

at::Tensor PackedWeight::linear(const at::Tensor& x, const at::Tensor& bias) const {
  TORCH_CHECK(
      x.device().is_cpu() && x.scalar_type() == at::kFloat && x.dim() >= 1 && x.size(-1) == cols_,
      "a packed fp32 product takes fp32 CPU [..., ", cols_, "], got ", x.scalar_type(), " ",
      x.sizes(), " on ", x.device());
  const auto input = x.reshape({-1, cols_}).contiguous();  // [m, in]
  const std::int64_t m = input.size(0);
  // C := A · op(B) + beta C, with C holding the bias rows first where there is a bias (a copy:
  // the product writes into C).
  auto out = at::empty({m, rows_}, input.options());  // [m, out]
  if (bias.defined()) out.copy_(bias.expand({m, rows_}));
  if (m > 0) {
    api().compute(kRowMajor, kNoTrans, kPacked, as_int(m, "rows"), static_cast<int>(rows_),
                  static_cast<int>(cols_), input.data_ptr<float>(), static_cast<int>(cols_),
                  packed_.get(), static_cast<int>(cols_), bias.defined() ? 1.0f : 0.0f,
                  out.data_ptr<float>(), static_cast<int>(rows_));
  }
  auto sizes = x.sizes().vec();
  sizes.back() = rows_;
  return out.view(sizes);  // [..., out]
}

}  // namespace nmt::runtime
