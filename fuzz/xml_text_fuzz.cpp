// Fuzz harness: common/xml_text.h, the text of every SVG the tools write (learning curves,
// attention heatmaps, the error analysis chart), from any bytes. Checked: the result is
// well-formed UTF-8 that holds no character XML 1.0 forbids and no unescaped '<' or '&', and
// escaping is idempotent on text that needed no escaping.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/utf8.h"
#include "common/xml_text.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = nmt::fuzz::as_text(data, size);
  const std::string escaped = nmt::xml_escape(input);
  if (nmt::utf8_invalid_bytes(escaped) != 0) nmt::fuzz::finding("escaped text is not UTF-8");
  if (escaped.find("\xEF\xBF\xBE") != std::string::npos ||
      escaped.find("\xEF\xBF\xBF") != std::string::npos) {
    nmt::fuzz::finding("escaped text holds U+FFFE or U+FFFF");
  }
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    const auto c = static_cast<unsigned char>(escaped[i]);
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f || c == '<' || c == '>' || c == '"') {
      nmt::fuzz::finding("escaped text holds the byte " + std::to_string(c) + " at " +
                         std::to_string(i));
    }
    if (c == '&') {
      const std::string_view rest = std::string_view(escaped).substr(i);
      if (rest.rfind("&amp;", 0) != 0 && rest.rfind("&lt;", 0) != 0 && rest.rfind("&gt;", 0) != 0 &&
          rest.rfind("&quot;", 0) != 0 && rest.rfind("&apos;", 0) != 0) {
        nmt::fuzz::finding("escaped text holds a bare '&' at " + std::to_string(i));
      }
    }
  }
  if (escaped == input && nmt::xml_escape(escaped) != escaped) {
    nmt::fuzz::finding("escaping text that needs none changes it");
  }
  return 0;
}
