#include "trainer/decode/attention_svg.h"

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <algorithm>

#include "common/xml_text.h"

namespace nmt::decode {
namespace {

constexpr int kCell = 22;    // pixels per cell
constexpr int kLabel = 120;  // room for token labels

}  // namespace

std::string attention_svg(const std::vector<std::string>& source_tokens,
                          const std::vector<std::string>& target_tokens, const at::Tensor& weights,
                          const std::string& title) {
  TORCH_CHECK(weights.dim() == 2 &&
                  weights.size(0) == static_cast<std::int64_t>(target_tokens.size()) &&
                  weights.size(1) == static_cast<std::int64_t>(source_tokens.size()),
              "attention_svg: weights must be [target tokens, source tokens]");
  const auto w = weights.to(at::kFloat).contiguous();
  const float* data = w.data_ptr<float>();
  const int cols = static_cast<int>(source_tokens.size()),
            rows = static_cast<int>(target_tokens.size());
  const int width = kLabel + cols * kCell + 10, height = kLabel + 20 + rows * kCell + 10;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"4\" y=\"14\" font-size=\"13\">{}</text>\n",
      width, height, xml_escape(title));
  const int top = kLabel + 20;
  for (int c = 0; c < cols; ++c) {
    const int x = kLabel + c * kCell + kCell / 2;
    svg += fmt::format("<text transform=\"translate({},{}) rotate(-60)\">{}</text>\n", x + 4,
                       top - 4, xml_escape(source_tokens[static_cast<std::size_t>(c)]));
  }
  for (int r = 0; r < rows; ++r) {
    const int y = top + r * kCell;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLabel - 4,
                       y + 15, xml_escape(target_tokens[static_cast<std::size_t>(r)]));
    for (int c = 0; c < cols; ++c) {
      const float value = std::clamp(data[r * cols + c], 0.0f, 1.0f);
      const int shade = static_cast<int>(255.0f * (1.0f - value));
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"rgb({},{},255)\" "
          "stroke=\"#ddd\">"
          "<title>{:.3f}</title></rect>\n",
          kLabel + c * kCell, y, kCell, kCell, shade, shade, value);
    }
  }
  return svg + "</svg>\n";
}

}  // namespace nmt::decode
