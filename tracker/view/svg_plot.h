#pragma once
// Learning curves as a standalone SVG document, what `nmt-tracker plot` writes (issue 18): one
// metric, any number of runs overlaid, with axes, 1-2-5 ticks labelled for people, a legend and a
// distinct colour (then dash pattern) per series. Written by hand: an SVG line chart is a few
// hundred lines, not worth a dependency.
//
// What it draws is bounded by the picture, not the data: before drawing, each series keeps at
// most two points per horizontal pixel (the lowest and the highest of that pixel column, in order,
// so spikes survive), so a 100,000-point series makes a file of tens of kilobytes. Points with a
// non-finite x or y, or one past +-1e300 (whose axis would not be finite), are skipped and counted
// in a note; so are y <= 0 on a log axis.

#include <limits>
#include <string>
#include <vector>

namespace nmt::tracker {

enum class PlotXAxis {
  kStep,     // training steps; ticks "0, 50k, 100k"
  kSeconds,  // elapsed seconds since each run's start; ticks as durations "30m, 1h, 1h 30m"
};

struct PlotPoint {
  double x = 0;
  double y = 0;
  // The range of a downsampled bucket (the daemon's "min"/"max"), drawn as a light band around
  // the line; NaN for a plain point.
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
};

struct PlotSeries {
  std::string label;              // the legend's text, e.g. the run's name; any bytes
  std::vector<PlotPoint> points;  // any order (sorted by x before drawing)
};

struct PlotOptions {
  std::string title;    // above the chart, e.g. the metric key; any bytes
  std::string y_label;  // beside the y axis; empty for none
  PlotXAxis x_axis = PlotXAxis::kStep;
  bool log_y = false;  // logarithmic y axis (perplexity)
  int width = 800;     // pixels, the whole picture; 200..10000
  int height = 450;    // pixels, above the legend (which adds a line per series); 150..10000

  // std::invalid_argument naming the field when a value is out of range.
  void validate() const;
};

// The whole SVG document (UTF-8, starting with the XML declaration). Every text in it (title, y
// label, series labels) is made printable (tracker/view/table_format.h) and XML-escaped. An
// empty `series`, or series without drawable points, still give a well-formed picture saying
// "no data". Calls options.validate().
std::string render_svg_plot(const PlotOptions& options, const std::vector<PlotSeries>& series);

// The pieces, exposed for tests and for anyone laying out another chart.

// The multiples of `step` in [lo, hi] (within rounding), at most 1000 of them.
std::vector<double> ticks_with_step(double lo, double hi, double step);

// Ticks at multiples of a 1, 2 or 5 x 10^k step, chosen so that about `target` (>= 2) of them fall
// in [lo, hi]; every returned tick lies in [lo, hi] (within rounding). lo < hi, both finite.
// `step_out`, when given, receives the step.
std::vector<double> nice_ticks(double lo, double hi, int target, double* step_out = nullptr);

// Ticks at durations people count in (1, 2, 5, 10, 15, 30 s; 1, 2, 5, 10, 15, 30 min; 1, 2, 3, 6,
// 12 h; 1, 2, 5, ... days) for an axis of seconds; nice_ticks below one second per tick.
std::vector<double> duration_ticks(double lo, double hi, int target, double* step_out = nullptr);

// Ticks for a log axis over [lo, hi] (0 < lo < hi): the powers of ten inside it, every k-th power
// when there are more than about 10; with 1, 2 and 5 mantissas when the range spans 3 decades or
// fewer; if that still gives fewer than two, nice_ticks(lo, hi, 4).
std::vector<double> log_ticks(double lo, double hi);

// `points` (sorted by x) thinned to at most two per column when [x_lo, x_hi] is spread over
// `columns` columns: in each column the point with the lowest y and the one with the highest, in
// x order; the band (min, max) of a kept point widens to cover the whole column's values. Points
// outside [x_lo, x_hi] fall into the first or last column.
std::vector<PlotPoint> thin_points(const std::vector<PlotPoint>& points, double x_lo, double x_hi,
                                   int columns);

}  // namespace nmt::tracker
