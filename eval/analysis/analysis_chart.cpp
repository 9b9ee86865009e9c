// The report's grouped bar chart (eval/analysis/analysis_chart.h): for BLEU, then chrF, one panel
// with a group of bars per source-length bucket, one bar per system, on a 0..100-bounded score
// axis.

#include "eval/analysis/analysis_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/utf8.h"
#include "common/xml_text.h"

namespace nmt::eval::analysis {
namespace {

constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                    "#9467bd", "#8c564b", "#e377c2", "#17becf"};
constexpr std::size_t kNumColours = sizeof(kColours) / sizeof(kColours[0]);

struct Layout {
  double left = 56, right = 16, top = 36;
  double panel_height = 200;  // plot area of one panel
  double panel_gap = 84;      // below a panel: bucket labels, counts, the next title
  double bar_width = 0, group_width = 0, width = 0, height = 0;
  std::size_t systems = 0;
};

Layout make_layout(const Analysis& analysis) {
  Layout l;
  l.systems = analysis.systems.size();
  l.bar_width = l.systems <= 4 ? 16 : 10;
  l.group_width = std::max(64.0, l.bar_width * static_cast<double>(l.systems) + 20);
  const double plot_width = l.group_width * static_cast<double>(analysis.buckets.size());
  l.width = std::ceil(std::max(480.0, l.left + plot_width + l.right));
  l.height = l.top + 2 * (l.panel_height + l.panel_gap) + 20.0 * static_cast<double>(l.systems);
  return l;
}

// The axis top: the highest bar rounded up to 10, at least 10.
double axis_top(const Analysis& analysis, bool bleu) {
  double top = 0;
  for (const auto& s : analysis.systems) {
    for (const auto& t : s.buckets) {
      if (t.sentences > 0) top = std::max(top, bleu ? t.bleu : t.chrf);
    }
  }
  return std::clamp(std::ceil(top / 10) * 10, 10.0, 100.0);
}

std::string panel(const Analysis& analysis, const Layout& l, bool bleu, double y0) {
  const auto metric = bleu ? std::string("BLEU") : analysis.chrf_name;
  const double top = axis_top(analysis, bleu);
  const double x0 = l.left, x1 = l.width - l.right, base = y0 + l.panel_height;
  std::string out = fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"14\" font-weight=\"bold\">{} by source length "
      "(words)</text>\n",
      x0, y0 - 12, xml_escape(metric));
  const double step = top > 50 ? 20 : 10;
  for (double v = 0; v <= top + 1e-9; v += step) {
    const double y = base - v / top * l.panel_height;
    out += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{:g}</text>\n",
        x0, y, x1, y, x0 - 6, y + 4, v);
  }
  for (std::size_t b = 0; b < analysis.buckets.size(); ++b) {
    const double gx = x0 + l.group_width * static_cast<double>(b);
    const double bars_x = gx + (l.group_width - l.bar_width * static_cast<double>(l.systems)) / 2;
    for (std::size_t k = 0; k < l.systems; ++k) {
      const auto& t = analysis.systems[k].buckets[b];
      if (t.sentences == 0) continue;
      const double h = std::clamp(bleu ? t.bleu : t.chrf, 0.0, top) / top * l.panel_height;
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>{} {}: {:.2f}</title></rect>\n",
          bars_x + l.bar_width * static_cast<double>(k), base - h, l.bar_width - 1, h,
          kColours[k % kNumColours], xml_escape(analysis.systems[k].name), xml_escape(metric),
          bleu ? t.bleu : t.chrf);
    }
    const double cx = gx + l.group_width / 2;
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#666\" "
        "text-anchor=\"middle\">n={}</text>\n",
        cx, base + 16, xml_escape(analysis.buckets[b].label()), cx, base + 30,
        analysis.buckets[b].sentences);
  }
  out += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\"/>\n", x0, base,
      x1, base);
  return out;
}

std::string legend(const Analysis& analysis, const Layout& l) {
  std::string out;
  const double y = l.top + 2 * (l.panel_height + l.panel_gap) - 30;
  for (std::size_t k = 0; k < l.systems; ++k) {
    const double row = y + 20.0 * static_cast<double>(k);
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\">{}</text>\n",
        l.left, row, kColours[k % kNumColours], l.left + 18, row + 10,
        xml_escape(analysis.systems[k].name));
  }
  return out;
}

}  // namespace

std::string render_bucket_chart(const Analysis& analysis) {
  const auto l = make_layout(analysis);
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      l.width, l.height);
  out += panel(analysis, l, /*bleu=*/true, l.top);
  out += panel(analysis, l, /*bleu=*/false, l.top + l.panel_height + l.panel_gap);
  out += legend(analysis, l);
  return out + "</svg>\n";
}

}  // namespace nmt::eval::analysis
