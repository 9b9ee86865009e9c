#pragma once
// Cross-attention heatmaps as SVG, the picture people use to inspect what each output token
// attended to: source tokens across the top, output tokens down the side, one cell per pair,
// darker for more weight.

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace nmt::decode {

// weights [target tokens, source tokens], rows summing to 1 (or 0 where nothing was visible).
std::string attention_svg(const std::vector<std::string>& source_tokens,
                          const std::vector<std::string>& target_tokens, const at::Tensor& weights,
                          const std::string& title);

}  // namespace nmt::decode
