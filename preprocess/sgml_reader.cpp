// WMT SGML corpora (the newstest sets): <doc docid="..."> elements holding <seg id="...">text</seg>
// lines, source and reference matched by (docid, seg id).
//
// Deliberate choices: a <seg> must open and close on one line (every WMT set does) and holds no
// other <seg>; a </seg> with no <seg> open is an error too, each naming the file and the line. Its
// content is trimmed of surrounding blanks and unescaped once; unknown entities stay as written.

#include "preprocess/sgml_reader.h"

#include <fmt/format.h>

#include <charconv>
#include <string_view>
#include <utility>

namespace nmt::preprocess {
namespace {

char to_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// `lower` must already be lowercase; SGML tag and attribute names are case-insensitive.
bool equals_ci(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (to_lower(text[i]) != lower[i]) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// SGML (WMT newstest): <doc docid="..."> elements holding <seg id="...">text</seg> lines.

void append_utf8(std::uint32_t code, std::string& out) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// Appends the character named by an entity (the text between '&' and ';'); false if unknown.
bool decode_entity(std::string_view name, std::string& out) {
  static constexpr std::pair<std::string_view, char> kNamed[] = {
      {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
  for (const auto& [entity, character] : kNamed) {
    if (name == entity) {
      out += character;
      return true;
    }
  }
  if (name.size() < 2 || name[0] != '#') return false;
  const bool hex = name[1] == 'x' || name[1] == 'X';
  const std::string_view digits = name.substr(hex ? 2 : 1);
  std::uint32_t code = 0;
  const auto [end, error] =
      std::from_chars(digits.data(), digits.data() + digits.size(), code, hex ? 16 : 10);
  // Malformed, NUL, surrogate or out-of-range references stay as written.
  const bool valid = error == std::errc() && end == digits.data() + digits.size() && code > 0 &&
                     code <= 0x10FFFF && (code < 0xD800 || code > 0xDFFF);
  if (valid) append_utf8(code, out);
  return valid;
}

// One pass, so "&amp;lt;" becomes "&lt;" and not "<".
void append_unescaped(std::string_view text, std::string& out) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t amp = text.find('&', pos);
    out.append(text.substr(pos, amp - pos));
    if (amp == std::string_view::npos) return;
    const std::size_t semicolon = text.find(';', amp);
    if (semicolon != std::string_view::npos && semicolon - amp <= 12 &&
        decode_entity(text.substr(amp + 1, semicolon - amp - 1), out)) {
      pos = semicolon + 1;
    } else {
      out += '&';
      pos = amp + 1;
    }
  }
}

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

// Whether line[pos] starts the tag `name` ("<seg", "<doc"), in any case, not a longer name.
bool opens_tag(std::string_view line, std::size_t pos, std::string_view name) {
  const std::size_t after = pos + name.size();
  return equals_ci(line.substr(pos, name.size()), name) &&
         (after == line.size() || is_blank(line[after]) || line[after] == '>' ||
          line[after] == '/');
}

enum class SegTag { kNone, kOpen, kClose };

// The first <seg ...> or </seg> tag (any case) at or after `from`, and where it starts.
std::pair<SegTag, std::size_t> next_seg_tag(std::string_view line, std::size_t from) {
  for (std::size_t pos = line.find('<', from); pos != std::string_view::npos;
       pos = line.find('<', pos + 1)) {
    if (opens_tag(line, pos, "<seg")) return {SegTag::kOpen, pos};
    if (opens_tag(line, pos, "</seg")) return {SegTag::kClose, pos};
  }
  return {SegTag::kNone, std::string_view::npos};
}

// The '>' closing the tag opened at `pos`, skipping quoted attribute values; npos if none.
std::size_t tag_end(std::string_view line, std::size_t pos) {
  char quote = 0;
  for (std::size_t i = pos; i < line.size(); ++i) {
    if (quote != 0) {
      if (line[i] == quote) quote = 0;
    } else if (line[i] == '"' || line[i] == '\'') {
      quote = line[i];
    } else if (line[i] == '>') {
      return i;
    }
  }
  return std::string_view::npos;
}

// The value of attribute `name` (lowercase) in a tag's attribute text; "" if absent. Values may
// be quoted with " or ', or bare.
std::string attribute(std::string_view attributes, std::string_view name) {
  std::size_t pos = 0;
  auto skip_blanks = [&] {
    while (pos < attributes.size() && is_blank(attributes[pos])) ++pos;
  };
  for (skip_blanks(); pos < attributes.size(); skip_blanks()) {
    const std::size_t key_start = pos;
    while (pos < attributes.size() && !is_blank(attributes[pos]) && attributes[pos] != '=') ++pos;
    const std::string_view key = attributes.substr(key_start, pos - key_start);
    skip_blanks();
    if (pos >= attributes.size() || attributes[pos] != '=') continue;  // a bare name
    ++pos;
    skip_blanks();
    std::string_view value;
    if (pos < attributes.size() && (attributes[pos] == '"' || attributes[pos] == '\'')) {
      const std::size_t close = attributes.find(attributes[pos], pos + 1);
      value = attributes.substr(pos + 1, close - pos - 1);
      pos = close == std::string_view::npos ? attributes.size() : close + 1;
    } else {
      const std::size_t value_start = pos;
      while (pos < attributes.size() && !is_blank(attributes[pos])) ++pos;
      value = attributes.substr(value_start, pos - value_start);
    }
    if (equals_ci(key, name)) return std::string(value);
  }
  return {};
}

// The <seg> elements of one SGML file in order, each with its document and id.
class SegmentSource {
 public:
  explicit SegmentSource(const std::string& path) : lines_(path) {}

  // False at the end of the file; otherwise `text` is the unescaped segment.
  bool next(std::string& text) {
    for (;;) {
      if (pos_ >= line_.size()) {
        if (!lines_.next(line_)) return false;
        pos_ = 0;
      }
      const std::size_t open = line_.find('<', pos_);
      if (open == std::string::npos) {
        pos_ = line_.size();
      } else if (opens_tag(line_, open, "<doc")) {
        docid_ = attribute(tag_attributes(open, 4), "docid");
      } else if (opens_tag(line_, open, "<seg")) {
        read_segment(open, text);
        return true;
      } else if (opens_tag(line_, open, "</seg")) {
        fail("</seg> without an open <seg>");
      } else {
        pos_ = open + 1;  // another element (<srcset>, <p>, </doc>...): skip it
      }
    }
  }

  LineSource& lines() { return lines_; }
  const LineSource& lines() const { return lines_; }
  const std::string& docid() const { return docid_; }
  const std::string& id() const { return id_; }
  std::int64_t count() const { return count_; }
  std::int64_t line() const { return segment_line_; }

  std::int64_t count_all() {
    std::string scratch;
    while (next(scratch)) {
    }
    return count_;
  }

 private:
  // The attribute text of the tag at `open` whose name has `name_length` characters (with '<');
  // moves past the tag.
  std::string_view tag_attributes(std::size_t open, std::size_t name_length) {
    const std::size_t close = tag_end(line_, open);
    if (close == std::string::npos) fail("a tag that does not close on its line");
    pos_ = close + 1;
    return std::string_view(line_).substr(open + name_length, close - open - name_length);
  }

  void read_segment(std::size_t open, std::string& text) {
    const std::int64_t opened = lines_.line_number();
    id_ = attribute(tag_attributes(open, 4), "id");
    const auto [tag, close] = next_seg_tag(line_, pos_);
    if (tag == SegTag::kOpen) fail(nested(opened));
    if (tag == SegTag::kNone) fail_unclosed(opened);
    const std::size_t close_end = tag_end(line_, close);
    if (close_end == std::string::npos) fail("a tag that does not close on its line");
    text.clear();
    append_unescaped(trim(std::string_view(line_).substr(pos_, close - pos_)), text);
    pos_ = close_end + 1;
    ++count_;
    segment_line_ = opened;
  }

  static std::string nested(std::int64_t opened) {
    return fmt::format(
        "<seg> opened inside another <seg> (opened on line {}): segments do not nest", opened);
  }

  // The <seg> opened on line `opened` does not close on that line: reads on to the next <seg> or
  // </seg> tag to say which mistake it is.
  [[noreturn]] void fail_unclosed(std::int64_t opened) {
    while (lines_.next(line_)) {
      const SegTag tag = next_seg_tag(line_, 0).first;
      if (tag == SegTag::kOpen) fail(nested(opened));
      if (tag == SegTag::kClose) {
        throw CorpusError(fmt::format(
            "{}:{}: <seg> closes on line {}, not on the line it opens (a <seg> must open and "
            "close on one line)",
            lines_.path(), opened, lines_.line_number()));
      }
    }
    throw CorpusError(
        fmt::format("{}:{}: <seg> not closed by the end of the file", lines_.path(), opened));
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw CorpusError(fmt::format("{}:{}: {}", lines_.path(), lines_.line_number(), what));
  }

  LineSource lines_;
  std::string line_;
  std::size_t pos_ = 0;  // scanning position in line_; at its end, read the next line
  std::string docid_;
  std::string id_;
  std::int64_t count_ = 0;
  std::int64_t segment_line_ = 0;
};

class SgmlPairReader : public TwoFilePairReader<SegmentSource> {
 public:
  using TwoFilePairReader::TwoFilePairReader;

  bool next(SentencePair& pair) override {
    if (!next_of_both(pair, [this] { throw_unequal(); })) return false;
    // A reference in another document order would pair wrong sentences without any other sign.
    if (source_.docid() != target_.docid() || source_.id() != target_.id()) throw_mismatch();
    pair.line = source_.count();
    return true;
  }

  double progress() const override {
    return read_fraction(source_.lines().bytes_read() + target_.lines().bytes_read(),
                         total_bytes());
  }
  std::int64_t total_bytes() const override {
    return source_.lines().file_size() + target_.lines().file_size();
  }

 private:
  [[noreturn]] void throw_unequal() {
    const std::int64_t source_count = source_.count_all();
    const std::int64_t target_count = target_.count_all();
    throw CorpusError(fmt::format("{} has {} segments but {} has {} segments",
                                  source_.lines().path(), source_count, target_.lines().path(),
                                  target_count));
  }

  [[noreturn]] void throw_mismatch() const {
    throw CorpusError(fmt::format(
        "segment {}: {}:{} has docid '{}' seg id '{}' but {}:{} has docid '{}' seg id '{}' (source "
        "and reference must list the same documents and segments in the same order)",
        source_.count(), source_.lines().path(), source_.line(), source_.docid(), source_.id(),
        target_.lines().path(), target_.line(), target_.docid(), target_.id()));
  }
};

}  // namespace

std::unique_ptr<PairReader> open_sgml_pair(const std::string& source,
                                           const std::string& reference) {
  return std::make_unique<SgmlPairReader>(source, reference);
}

}  // namespace nmt::preprocess
