// Dropout with a parallel, counter-based CPU mask (see dropout.h).

#include "trainer/model/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/types.h>

#include <cmath>
#include <mutex>
#include <stdexcept>

#include "common/mix64.h"

namespace nmt::model {
namespace {

constexpr int kPerHash = 4;  // 16-bit uniforms per hash

std::uint64_t draw_seed() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get<at::CPUGeneratorImpl>()->random64();
}

}  // namespace

torch::Tensor dropout_mask(const torch::Tensor& like, double p, std::uint64_t seed) {
  if (!(p >= 0.0 && p < 1.0)) throw std::invalid_argument("dropout_mask: p must be in [0, 1)");
  auto mask =
      torch::empty(like.sizes(), like.options().memory_format(at::MemoryFormat::Contiguous));
  const auto threshold = static_cast<std::uint32_t>(std::lround(p * 65536.0));  // drop if below
  if (threshold >= 65536u) throw std::invalid_argument("dropout_mask: p rounds to 1");
  const double scale = 65536.0 / static_cast<double>(65536u - threshold);
  const std::int64_t n = mask.numel();
  const std::int64_t hashes = (n + kPerHash - 1) / kPerHash;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kBFloat16, at::kHalf, mask.scalar_type(), "dropout_mask", [&] {
        using T = scalar_t;
        T* out = mask.data_ptr<T>();
        const T keep = static_cast<T>(scale);
        const T drop = static_cast<T>(0);
        at::parallel_for(0, hashes, 4096, [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t h = begin; h < end; ++h) {
            const std::uint64_t bits =
                splitmix64_finalize(seed + static_cast<std::uint64_t>(h) * kSplitMix64Gamma);
            const std::int64_t first = h * kPerHash;
            const int count = static_cast<int>(std::min<std::int64_t>(kPerHash, n - first));
            for (int k = 0; k < count; ++k) {
              const auto uniform = static_cast<std::uint32_t>((bits >> (16 * k)) & 0xFFFFu);
              out[first + k] = uniform >= threshold ? keep : drop;
            }
          }
        });
      });
  return mask;
}

DropoutImpl::DropoutImpl(double p) : p_(p) {
  if (!(p >= 0.0 && p < 1.0)) throw std::invalid_argument("dropout probability must be in [0, 1)");
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) {
  if (!is_training() || p_ == 0.0 || x.numel() == 0) return x;
  if (!x.device().is_cpu()) return torch::dropout(x, p_, /*train=*/true);
  return x * dropout_mask(x, p_, draw_seed());
}

}  // namespace nmt::model
