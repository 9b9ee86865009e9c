#include "tracker/view/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "common/utf8.h"
#include "common/xml_text.h"
#include "tracker/view/human_format.h"
#include "tracker/view/table_format.h"

namespace nmt::tracker {
namespace {

// Ten colours far apart in hue and lightness; past ten series the colours repeat with a dash
// pattern, so no two of 40 series look alike.
constexpr std::array<const char*, 10> kColours = {"#1b6ac9", "#d9480f", "#2b8a3e", "#c2255c",
                                                  "#7048e8", "#e67700", "#0b7285", "#5c5f66",
                                                  "#a61e4d", "#5c940d"};
constexpr std::array<const char*, 4> kDashes = {"", "6 3", "2 2", "8 3 2 3"};
constexpr std::size_t kLegendLabelBytes = 120;  // longer labels are cut (the full one is a tooltip)

// Text for an XML text node or attribute: printable() first, so that a control in a run's name
// shows as \xHH rather than vanishing, then XML-escaped.
std::string xml_text(std::string_view raw) {
  return xml_escape(printable(raw));
}

// At most `limit` bytes of `text`, cut on a character boundary, with an ellipsis when cut.
std::string shorten(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) {
    return text;
  }
  std::size_t end = 0;
  while (end < text.size()) {
    const std::size_t length = std::max<std::size_t>(1, utf8_sequence_length(text, end));
    if (end + length > limit) {
      break;
    }
    end += length;
  }
  return text.substr(0, end) + "…";
}

// One axis: its range (extended to whole ticks), its ticks and their labels.
struct Axis {
  double lo = 0;
  double hi = 1;
  bool log = false;
  std::vector<double> ticks;
  std::vector<std::string> labels;

  // Position 0..1 along the axis.
  double fraction(double value) const {
    return log ? (std::log10(value) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
               : (value - lo) / (hi - lo);
  }
};

// A zero-width data range made wide enough to draw: the value in the middle, never below 0 for
// values that are not negative.
void widen(double& lo, double& hi) {
  if (lo < hi) {
    return;
  }
  const double half = std::max(1.0, std::abs(lo) * 0.1);
  lo = (lo >= 0 && lo - half < 0) ? 0 : lo - half;
  hi += half;
}

Axis linear_axis(double lo, double hi, bool seconds) {
  widen(lo, hi);
  double step = 0;
  if (seconds) {
    duration_ticks(lo, hi, 6, &step);
  } else {
    nice_ticks(lo, hi, 6, &step);
  }
  Axis axis;
  // Out to whole ticks; a range already ending on a tick (within rounding) stays there.
  axis.lo = std::floor(lo / step + 1e-9) * step;
  axis.hi = std::ceil(hi / step - 1e-9) * step;
  axis.ticks = ticks_with_step(axis.lo, axis.hi, step);
  for (const double tick : axis.ticks) {
    axis.labels.push_back(seconds && step >= 1 ? format_duration_compact(tick)
                                               : format_tick(tick, step) + (seconds ? " s" : ""));
  }
  return axis;
}

Axis log_axis(double lo, double hi) {
  Axis axis;
  axis.log = true;
  axis.lo = std::pow(10.0, std::floor(std::log10(lo)));
  axis.hi = std::pow(10.0, std::ceil(std::log10(hi)));
  if (axis.hi <= axis.lo) {
    axis.hi = axis.lo * 10;
  }
  axis.ticks = log_ticks(axis.lo, axis.hi);
  for (const double tick : axis.ticks) {
    axis.labels.push_back(format_number(tick));
  }
  return axis;
}

// The largest magnitude of x, y and a band drawn: an axis spanning both signs of it (or a decade
// past it) is still finite, which the sum of two values near the largest double is not.
constexpr double kLargestDrawn = 1e300;

bool drawable(double value) {
  return std::isfinite(value) && std::abs(value) <= kLargestDrawn;
}

// A series' drawable points, sorted by x, and how many were left out.
struct Prepared {
  std::vector<PlotPoint> points;
  std::size_t non_finite = 0;    // non-finite, or past kLargestDrawn
  std::size_t non_positive = 0;  // y <= 0 on a log axis
};

Prepared prepare(const PlotSeries& series, bool log_y) {
  Prepared out;
  for (PlotPoint p : series.points) {
    if (!drawable(p.x) || !drawable(p.y)) {
      ++out.non_finite;
      continue;
    }
    if (log_y && p.y <= 0) {
      ++out.non_positive;
      continue;
    }
    const bool band = drawable(p.min) && drawable(p.max) && (!log_y || p.min > 0);
    if (!band) {
      p.min = p.max = std::numeric_limits<double>::quiet_NaN();
    }
    out.points.push_back(p);
  }
  std::stable_sort(out.points.begin(), out.points.end(),
                   [](const PlotPoint& a, const PlotPoint& b) { return a.x < b.x; });
  return out;
}

struct Frame {
  int width = 0;
  int height = 0;   // the whole picture, legend included
  double left = 0;  // the plot area
  double right = 0;
  double top = 0;
  double bottom = 0;
};

std::string coordinate(double value) {
  return fmt::format("{:.1f}", value);
}

void draw_axes(std::string& svg, const Frame& f, const Axis& x, const Axis& y) {
  svg += "<g class=\"grid\" stroke=\"#e3e3e3\" stroke-width=\"1\">\n";
  for (const double tick : x.ticks) {
    const std::string px = coordinate(f.left + x.fraction(tick) * (f.right - f.left));
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", px,
                       coordinate(f.top), coordinate(f.bottom));
  }
  for (const double tick : y.ticks) {
    const std::string py = coordinate(f.bottom - y.fraction(tick) * (f.bottom - f.top));
    svg += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>\n", py,
                       coordinate(f.left), coordinate(f.right));
  }
  svg += "</g>\n<g class=\"x-ticks\" text-anchor=\"middle\" fill=\"#333\">\n";
  for (std::size_t i = 0; i < x.ticks.size(); ++i) {
    svg += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\">{}</text>\n",
                       coordinate(f.left + x.fraction(x.ticks[i]) * (f.right - f.left)),
                       coordinate(f.bottom + 18), xml_text(x.labels[i]));
  }
  svg += "</g>\n<g class=\"y-ticks\" text-anchor=\"end\" fill=\"#333\">\n";
  for (std::size_t i = 0; i < y.ticks.size(); ++i) {
    svg += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\">{}</text>\n", coordinate(f.left - 6),
                       coordinate(f.bottom - y.fraction(y.ticks[i]) * (f.bottom - f.top) + 4),
                       xml_text(y.labels[i]));
  }
  svg += "</g>\n";
  svg += fmt::format(
      "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#888\"/>\n",
      coordinate(f.left), coordinate(f.top), coordinate(f.right - f.left),
      coordinate(f.bottom - f.top));
}

void draw_series(std::string& svg, const Frame& f, const Axis& x, const Axis& y,
                 const std::vector<PlotPoint>& points, std::size_t index) {
  const auto px = [&](double v) { return coordinate(f.left + x.fraction(v) * (f.right - f.left)); };
  const auto py = [&](double v) {
    return coordinate(f.bottom - y.fraction(v) * (f.bottom - f.top));
  };
  const char* colour = kColours[index % kColours.size()];
  const char* dash = kDashes[index / kColours.size() % kDashes.size()];
  // The band of downsampled buckets: along the tops, back along the bottoms.
  std::string band;
  for (const auto& p : points) {
    if (std::isfinite(p.max))
      band += fmt::format("{}{},{}", band.empty() ? "M" : " L", px(p.x), py(p.max));
  }
  if (!band.empty()) {
    for (auto p = points.rbegin(); p != points.rend(); ++p) {
      if (std::isfinite(p->min)) band += fmt::format(" L{},{}", px(p->x), py(p->min));
    }
    svg += fmt::format(
        "<path class=\"band\" data-series=\"{}\" d=\"{} Z\" fill=\"{}\" "
        "fill-opacity=\"0.15\" stroke=\"none\"/>\n",
        index, band, colour);
  }
  std::string coords;
  for (const auto& p : points) {
    coords += fmt::format("{}{},{}", coords.empty() ? "" : " ", px(p.x), py(p.y));
  }
  svg += fmt::format(
      "<polyline class=\"series\" data-series=\"{}\" points=\"{}\" fill=\"none\" "
      "stroke=\"{}\" stroke-width=\"1.5\" stroke-linejoin=\"round\"{}/>\n",
      index, coords, colour, *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : std::string());
  if (points.size() == 1) {  // a line of one point shows nothing
    svg += fmt::format(
        "<circle class=\"marker\" data-series=\"{}\" cx=\"{}\" cy=\"{}\" r=\"3\" "
        "fill=\"{}\"/>\n",
        index, px(points[0].x), py(points[0].y), colour);
  }
}

void draw_legend(std::string& svg, const Frame& f, const std::vector<PlotSeries>& series,
                 const std::vector<Prepared>& prepared) {
  svg += "<g class=\"legend\" fill=\"#222\">\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double y = f.bottom + 72 + 18.0 * static_cast<double>(i);  // below the x label
    const char* dash = kDashes[i / kColours.size() % kDashes.size()];
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
        "stroke-width=\"2\"{4}/>\n",
        coordinate(f.left), coordinate(y - 4), coordinate(f.left + 24),
        kColours[i % kColours.size()],
        *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : std::string());
    const std::string label = printable(series[i].label);
    svg +=
        fmt::format("<text class=\"legend-label\" x=\"{}\" y=\"{}\"><title>{}</title>{}{}</text>\n",
                    coordinate(f.left + 30), coordinate(y), xml_text(label),
                    xml_text(shorten(label, kLegendLabelBytes)),
                    prepared[i].points.empty() ? " (no data)" : "");
  }
  svg += "</g>\n";
}

std::string skipped_note(const std::vector<Prepared>& prepared) {
  std::size_t non_finite = 0;
  std::size_t non_positive = 0;
  for (const auto& p : prepared) {
    non_finite += p.non_finite;
    non_positive += p.non_positive;
  }
  std::vector<std::string> parts;
  if (non_finite > 0)
    parts.push_back(format_count(static_cast<std::int64_t>(non_finite)) + " non-finite or huge");
  if (non_positive > 0)
    parts.push_back(format_count(static_cast<std::int64_t>(non_positive)) +
                    " <= 0 on the log scale");
  return parts.empty() ? "" : fmt::format("points not drawn: {}", fmt::join(parts, ", "));
}

}  // namespace

void PlotOptions::validate() const {
  if (width < 200 || width > 10000) {
    throw std::invalid_argument(fmt::format("plot width: {} is outside 200..10000 pixels", width));
  }
  if (height < 150 || height > 10000) {
    throw std::invalid_argument(
        fmt::format("plot height: {} is outside 150..10000 pixels", height));
  }
}

std::string render_svg_plot(const PlotOptions& options, const std::vector<PlotSeries>& series) {
  options.validate();
  std::vector<Prepared> prepared;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const auto& s : series) {
    prepared.push_back(prepare(s, options.log_y));
    for (const auto& p : prepared.back().points) {
      x_lo = std::min(x_lo, p.x);
      x_hi = std::max(x_hi, p.x);
      y_lo = std::min({y_lo, p.y, std::isfinite(p.min) ? p.min : p.y});
      y_hi = std::max({y_hi, p.y, std::isfinite(p.max) ? p.max : p.y});
    }
  }
  const bool empty = !(x_lo <= x_hi);
  if (empty) {  // an empty frame of a sensible shape
    x_lo = 0;
    x_hi = 1;
    y_lo = 1;
    y_hi = 10;
  }
  const Axis x = linear_axis(x_lo, x_hi, options.x_axis == PlotXAxis::kSeconds);
  const Axis y = options.log_y ? log_axis(y_lo, y_hi) : linear_axis(y_lo, y_hi, false);

  Frame f;
  f.width = options.width;
  f.height = options.height + (series.empty() ? 0 : 8 + 18 * static_cast<int>(series.size()));
  f.left = options.y_label.empty() ? 72 : 88;
  f.right = options.width - 24;
  f.top = 48;
  f.bottom = options.height - 56;

  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<title>{2}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text class=\"title\" x=\"{3}\" y=\"24\" text-anchor=\"middle\" "
      "font-size=\"15\">{2}</text>\n",
      f.width, f.height, xml_text(options.title), coordinate(f.width / 2.0));
  if (const std::string note = skipped_note(prepared); !note.empty()) {
    svg += fmt::format(
        "<text class=\"note\" x=\"{}\" y=\"40\" text-anchor=\"end\" fill=\"#888\" "
        "font-size=\"11\">{}</text>\n",
        coordinate(f.right), xml_text(note));
  }
  draw_axes(svg, f, x, y);
  svg += fmt::format("<text class=\"x-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     coordinate((f.left + f.right) / 2), coordinate(f.bottom + 40),
                     options.x_axis == PlotXAxis::kSeconds ? "time since start" : "step");
  if (!options.y_label.empty()) {
    svg += fmt::format(
        "<text class=\"y-label\" transform=\"translate(16 {}) rotate(-90)\" "
        "text-anchor=\"middle\">{}</text>\n",
        coordinate((f.top + f.bottom) / 2), xml_text(options.y_label));
  }
  if (empty) {
    svg += fmt::format(
        "<text class=\"no-data\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" "
        "fill=\"#888\">no data</text>\n",
        coordinate((f.left + f.right) / 2), coordinate((f.top + f.bottom) / 2));
  }
  const int columns = static_cast<int>(f.right - f.left);
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (!prepared[i].points.empty()) {
      draw_series(svg, f, x, y, thin_points(prepared[i].points, x.lo, x.hi, columns), i);
    }
  }
  draw_legend(svg, f, series, prepared);
  svg += "</svg>\n";
  return svg;
}

std::vector<PlotPoint> thin_points(const std::vector<PlotPoint>& points, double x_lo, double x_hi,
                                   int columns) {
  if (columns < 1 || points.size() <= 2 || !(x_lo < x_hi)) {
    return points;
  }
  const auto column_of = [&](double x) {
    // A fraction of a range past the largest double is NaN: column 0, as for any x before x_lo.
    const double c = std::floor((x - x_lo) / (x_hi - x_lo) * columns);
    return c >= 1 ? static_cast<int>(std::min(c, static_cast<double>(columns - 1))) : 0;
  };
  std::vector<PlotPoint> kept;
  for (std::size_t begin = 0; begin < points.size();) {
    const int column = column_of(points[begin].x);
    std::size_t end = begin, low = begin, high = begin;
    double band_lo = std::numeric_limits<double>::infinity(), band_hi = -band_lo;
    bool banded = false;
    for (; end < points.size() && column_of(points[end].x) == column; ++end) {
      const PlotPoint& p = points[end];
      if (p.y < points[low].y) low = end;
      if (p.y > points[high].y) high = end;
      banded = banded || std::isfinite(p.min);
      band_lo = std::min(band_lo, std::isfinite(p.min) ? p.min : p.y);
      band_hi = std::max(band_hi, std::isfinite(p.max) ? p.max : p.y);
    }
    std::vector<std::size_t> chosen = {std::min(low, high)};
    if (low != high) chosen.push_back(std::max(low, high));
    for (const std::size_t i : chosen) {
      kept.push_back(points[i]);
      if (banded && end - begin > 1) {
        kept.back().min = band_lo;
        kept.back().max = band_hi;
      }
    }
    begin = end;
  }
  return kept;
}

}  // namespace nmt::tracker
