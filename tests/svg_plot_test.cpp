// Learning curves as SVG (tracker/view/svg_plot.h): 1-2-5 ticks, duration and log ticks, the
// thinning bound (two points per pixel column, spikes kept), one polyline per series with data,
// escaped labels, and pictures for the awkward inputs (nothing, one point, a constant, NaN).
// SvgPlotSamples writes the documents that tests/scripts/svg_plot_check.py reads back with a real
// XML parser (CTest: svg_plot_well_formed).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracker/view/svg_plot.h"

namespace nmt::tracker {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The number of x,y pairs in the first polyline of series `index`.
std::size_t polyline_points(const std::string& svg, int index) {
  const std::string start =
      "<polyline class=\"series\" data-series=\"" + std::to_string(index) + "\" points=\"";
  const std::size_t at = svg.find(start);
  if (at == std::string::npos) return 0;
  const std::size_t begin = at + start.size();
  const std::string points = svg.substr(begin, svg.find('"', begin) - begin);
  return points.empty() ? 0 : count(points, " ") + 1;
}

std::vector<PlotPoint> curve(int n, double step, double start_value) {
  std::vector<PlotPoint> points;
  for (int i = 0; i < n; ++i) {
    const double x = (i + 1) * step;
    points.push_back({x, start_value / std::sqrt(1 + i * 0.1)});
  }
  return points;
}

// The documents the XML check reads, by file name.
std::map<std::string, std::string> samples() {
  std::map<std::string, std::string> out;
  PlotOptions o;
  o.title = "train/loss <&> \"quoted\" 'single'";
  o.y_label = "loss";
  std::vector<PlotPoint> banded = curve(50, 200, 8);
  for (auto& p : banded) {
    p.min = p.y * 0.9;
    p.max = p.y * 1.1;
  }
  out["curves.svg"] = render_svg_plot(o, {{"base <run> & \"co\"", curve(300, 100, 9)},
                                          {std::string("esc\x1b[31mred\x7f"), curve(120, 250, 7)},
                                          {"downsampled", banded}});
  std::vector<PlotPoint> huge = curve(100000, 1, 10);
  huge[50000].y = 1000;  // one spike, which thinning must keep
  o.title = "huge";
  out["huge.svg"] = render_svg_plot(o, {{"huge", huge}});
  o.title = "perplexity";
  o.log_y = true;
  out["log.svg"] = render_svg_plot(
      o, {{"ppl", {{1, 300}, {2, 80}, {3, 20}, {4, 7}, {5, 5.5}, {6, 0}, {7, -1}}}});
  o = PlotOptions{};
  o.title = "empty";
  out["empty.svg"] = render_svg_plot(o, {});
  out["empty_series.svg"] =
      render_svg_plot(o, {{"nothing", {}}, {"all nan", {{kNaN, 1}, {2, kNaN}}}});
  out["single.svg"] = render_svg_plot(o, {{"one", {{100, 4.5}}}});
  out["constant.svg"] = render_svg_plot(o, {{"flat", {{0, 3}, {100, 3}, {200, 3}}}});
  o.x_axis = PlotXAxis::kSeconds;
  std::vector<PlotPoint> timed = curve(100, 60, 5);  // 100 minutes
  out["time.svg"] = render_svg_plot(o, {{"timed", timed}});
  return out;
}

TEST(SvgPlot, NiceTicksUseOneTwoFiveSteps) {
  double step = 0;
  EXPECT_EQ(nice_ticks(0, 10, 5, &step), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(step, 2);
  const auto ticks = nice_ticks(3.7, 5.2, 5, &step);
  EXPECT_DOUBLE_EQ(step, 0.5);
  ASSERT_EQ(ticks.size(), 3U);
  EXPECT_DOUBLE_EQ(ticks[0], 4.0);
  EXPECT_DOUBLE_EQ(ticks[2], 5.0);
  nice_ticks(0, 300000, 6, &step);
  EXPECT_EQ(step, 50000);
  EXPECT_THROW(nice_ticks(1, 1, 5), std::invalid_argument);
  EXPECT_THROW(nice_ticks(0, kNaN, 5), std::invalid_argument);
}

TEST(SvgPlot, DurationTicksCountInMinutesAndHours) {
  double step = 0;
  EXPECT_EQ(duration_ticks(0, 6000, 6, &step),
            (std::vector<double>{0, 900, 1800, 2700, 3600, 4500, 5400}));
  EXPECT_EQ(step, 900);  // 15 minutes, not the 1000 s a decimal step would give
  duration_ticks(0, 3 * 86400, 6, &step);
  EXPECT_EQ(step, 43200);
  duration_ticks(0, 2, 4, &step);  // below a second per tick: decimal steps
  EXPECT_DOUBLE_EQ(step, 0.5);
}

TEST(SvgPlot, LogTicksAreDecadesWithMantissasOnShortRanges) {
  EXPECT_EQ(log_ticks(1, 1000), (std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}));
  EXPECT_EQ(log_ticks(1e-3, 1e5),
            (std::vector<double>{1e-3, 1e-2, 1e-1, 1, 10, 100, 1000, 1e4, 1e5}));
  EXPECT_EQ(log_ticks(1, 1e30).size(), 8U);  // every fourth decade: 1e0 .. 1e28
  EXPECT_GE(log_ticks(3, 4).size(), 2U);     // no 1-2-5 value inside: linear ticks
  EXPECT_THROW(log_ticks(0, 10), std::invalid_argument);
}

TEST(SvgPlot, ThinningKeepsAtMostTwoPointsPerColumnAndTheSpikes) {
  std::vector<PlotPoint> points;
  for (int i = 0; i < 100000; ++i) points.push_back({static_cast<double>(i), std::sin(i * 0.01)});
  points[77777].y = 50;
  points[22222].y = -50;
  const auto thinned = thin_points(points, 0, 100000, 500);
  EXPECT_LE(thinned.size(), 1000U);
  EXPECT_GE(thinned.size(), 500U);
  bool high = false, low = false;
  for (std::size_t i = 0; i < thinned.size(); ++i) {
    high = high || thinned[i].y == 50;
    low = low || thinned[i].y == -50;
    if (i > 0) {
      EXPECT_LE(thinned[i - 1].x, thinned[i].x);
    }
  }
  EXPECT_TRUE(high && low);
  // Short series pass through.
  EXPECT_EQ(thin_points({{0, 1}, {1, 2}}, 0, 1, 500).size(), 2U);
}

TEST(SvgPlot, ThinningWidensBandsOverTheColumn) {
  std::vector<PlotPoint> points = {{0, 5, 4, 6}, {0.1, 5, 1, 9}, {0.2, 5, 3, 7}};
  const auto thinned = thin_points(points, 0, 10, 10);  // all three in column 0
  ASSERT_EQ(thinned.size(), 1U);                        // equal y: one point
  EXPECT_EQ(thinned[0].min, 1);
  EXPECT_EQ(thinned[0].max, 9);
}

TEST(SvgPlot, OnePolylinePerSeriesWithEscapedLabels) {
  const auto svg = samples().at("curves.svg");
  EXPECT_EQ(count(svg, "<polyline class=\"series\""), 3U);
  EXPECT_EQ(count(svg, "<path class=\"band\""), 1U);
  EXPECT_EQ(polyline_points(svg, 0), 300U);
  EXPECT_NE(svg.find("base &lt;run&gt; &amp; &quot;co&quot;"), std::string::npos);
  EXPECT_NE(svg.find("train/loss &lt;&amp;&gt; &quot;quoted&quot; &apos;single&apos;"),
            std::string::npos);
  EXPECT_NE(svg.find("esc\\x1b[31mred\\x7f"), std::string::npos);  // no raw ESC or DEL
  EXPECT_EQ(svg.find('\x1b'), std::string::npos);
  EXPECT_EQ(svg.find("<run>"), std::string::npos);
  // Ticks: steps 0..30,000 in 5k.
  EXPECT_NE(svg.find(">30k</text>"), std::string::npos);
  EXPECT_NE(svg.find(">0</text>"), std::string::npos);
}

TEST(SvgPlot, AHundredThousandPointsMakeASmallFile) {
  const auto svg = samples().at("huge.svg");
  const std::size_t plot_width = 800 - 88 - 24;  // the default width less the margins
  EXPECT_LE(polyline_points(svg, 0), 2 * plot_width);
  EXPECT_LT(svg.size(), 60000U);
  EXPECT_NE(svg.find(">1000</text>"), std::string::npos);  // the spike set the y range
}

TEST(SvgPlot, LogScaleSkipsValuesAtOrBelowZero) {
  const auto svg = samples().at("log.svg");
  EXPECT_EQ(polyline_points(svg, 0), 5U);
  EXPECT_NE(svg.find("points not drawn: 2 &lt;= 0 on the log scale"), std::string::npos);
  for (const char* tick : {">1</text>", ">10</text>", ">100</text>", ">1000</text>", ">5</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
}

TEST(SvgPlot, AwkwardInputsStillDraw) {
  const auto all = samples();
  EXPECT_NE(all.at("empty.svg").find("no data"), std::string::npos);
  EXPECT_EQ(count(all.at("empty.svg"), "<polyline"), 0U);
  const auto& empty_series = all.at("empty_series.svg");
  EXPECT_EQ(count(empty_series, "<polyline"), 0U);
  EXPECT_EQ(count(empty_series, "(no data)"), 2U);
  EXPECT_NE(empty_series.find("points not drawn: 2 non-finite"), std::string::npos);
  EXPECT_EQ(count(all.at("single.svg"), "<circle class=\"marker\""), 1U);
  EXPECT_EQ(polyline_points(all.at("constant.svg"), 0), 3U);
  EXPECT_EQ(all.at("constant.svg").find("nan"), std::string::npos);
  EXPECT_EQ(all.at("single.svg").find("nan"), std::string::npos);
  // The time axis counts in durations.
  EXPECT_NE(all.at("time.svg").find(">1h 30m</text>"), std::string::npos);
}

// Values at the ends of the doubles and steps at the ends of the tracker's range still draw a
// picture with no NaN or infinity in it, in bounded time; thinning places such points in columns.
TEST(SvgPlot, ExtremeValuesAndStepsStillDraw) {
  constexpr double kHuge = 1.7e308;
  constexpr double kMaxStep = 9007199254740991.0;
  const std::vector<std::vector<PlotPoint>> cases = {
      {{0, -kHuge}, {1, kHuge}, {2, 0}},
      {{0, 1}, {kMaxStep, 2}, {kMaxStep / 2, 3}},
      {{-kHuge, 1}, {kHuge, 2}, {0, 3}},
      {{0, 1, -kHuge, kHuge}, {1, 2, -kHuge, kHuge}, {2, 3}},
      {{0, std::numeric_limits<double>::max()}, {1, std::numeric_limits<double>::lowest()}}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    for (const bool log_y : {false, true}) {
      PlotOptions options;
      options.log_y = log_y;
      const std::string svg = render_svg_plot(options, {{"s", cases[i]}});
      EXPECT_EQ(svg.find("nan"), std::string::npos) << i << " " << log_y;
      EXPECT_EQ(svg.find("inf"), std::string::npos) << i << " " << log_y;
      EXPECT_NE(svg.find("</svg>"), std::string::npos);
    }
    const auto kept = thin_points(cases[i], -kHuge, kHuge, 100);
    EXPECT_FALSE(kept.empty()) << i;
  }
}

TEST(SvgPlot, OptionsAreValidated) {
  PlotOptions o;
  o.width = 10;
  EXPECT_THROW(render_svg_plot(o, {}), std::invalid_argument);
  o = PlotOptions{};
  o.height = 20000;
  try {
    o.validate();
    FAIL() << "height 20000 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("height"), std::string::npos) << e.what();
  }
}

// Writes the samples to $NMT_SVG_PLOT_OUT (a temporary folder when unset) for the XML check.
TEST(SvgPlotSamples, Write) {
  const char* env = std::getenv("NMT_SVG_PLOT_OUT");
  const std::filesystem::path dir =
      env != nullptr ? env : std::filesystem::temp_directory_path() / "svg_plot_samples";
  std::filesystem::create_directories(dir);
  for (const auto& [name, svg] : samples()) {
    std::ofstream(dir / name, std::ios::binary) << svg;
    EXPECT_EQ(std::filesystem::file_size(dir / name), svg.size()) << name;
  }
}

}  // namespace
}  // namespace nmt::tracker
