#pragma once
// The report's figure: corpus BLEU and chrF per source-length bucket, one bar per system in each
// bucket, as a standalone SVG document (two panels, a legend, the bucket's sentence count under
// its label). Written by hand like tracker/view/svg_plot.h, which draws lines over steps, not
// grouped bars over categories. Empty buckets keep their place but draw no bars.

#include <string>

#include "eval/analysis/error_analysis.h"

namespace nmt::eval::analysis {

// UTF-8 SVG starting with the XML declaration; system names are XML-escaped, with characters XML
// cannot hold (C0 controls, invalid sequences never reach here) replaced by U+FFFD.
std::string render_bucket_chart(const Analysis& analysis);

}  // namespace nmt::eval::analysis
