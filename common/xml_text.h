#pragma once
// Text for an XML (SVG) text node or attribute, whatever bytes it came as: the five XML specials
// as entities, and everything XML 1.0 cannot hold (C0 controls but tab and newline, DEL, bytes
// that are not well-formed UTF-8, the noncharacters U+FFFE and U+FFFF) as U+FFFD. Shared by the
// SVG writers: learning curves, attention heatmaps, the error analysis chart.

#include <string>
#include <string_view>

namespace nmt {

std::string xml_escape(std::string_view text);

}  // namespace nmt
