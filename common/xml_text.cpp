#include "common/xml_text.h"

#include "common/utf8.h"

namespace nmt {

std::string xml_escape(std::string_view text) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_length(text, i);
      const bool nonchar = n == 3 && text.compare(i, 2, "\xEF\xBF") == 0 &&
                           (text[i + 2] == '\xBE' || text[i + 2] == '\xBF');
      if (n == 0 || nonchar) {
        out += kReplacement;
        i += n == 0 ? 1 : n;
      } else {
        out.append(text, i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\t':
      case '\n':
        out += static_cast<char>(c);
        break;
      default:
        out += c < 0x20 || c == 0x7F ? std::string(kReplacement) : std::string(1, text[i]);
    }
    ++i;
  }
  return out;
}

}  // namespace nmt
