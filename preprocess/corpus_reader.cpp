// Corpus readers: plain or gzipped line files read through one 1 MiB buffer (no per-line
// allocation once the caller's strings have grown), and three pairings on top of them: two text
// files in lockstep, two WMT SGML files matched by (docid, seg id), one TSV file.
//
// Deliberate choices: an SGML <seg> must open and close on one line (every WMT set does), its
// content is trimmed of surrounding blanks and unescaped once; unknown entities stay as written.
#include "preprocess/corpus_reader.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

namespace nmt::preprocess {
namespace {

constexpr std::size_t kBufferSize = std::size_t{1} << 20;
// zlib's own input buffer; under half of kBufferSize so gzread inflates straight into ours.
constexpr unsigned kGzipInputBuffer = 256u << 10;

[[noreturn]] void throw_open_error(const std::string& path, int error) {
  throw CorpusError("cannot open " + path + ": " + std::strerror(error));
}

bool has_gzip_magic(std::FILE* file) {
  unsigned char magic[2] = {0, 0};
  return std::fread(magic, 1, 2, file) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

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

std::size_t find_ci(std::string_view text, std::string_view lower, std::size_t from) {
  for (std::size_t pos = text.find('<', from); pos != std::string_view::npos;
       pos = text.find('<', pos + 1)) {
    if (equals_ci(text.substr(pos, lower.size()), lower)) return pos;
  }
  return std::string_view::npos;
}

// Fraction done; a size of 0 (an empty file or a pipe) gives no estimate.
double fraction(std::int64_t done, std::int64_t total) {
  if (total <= 0) return 0.0;
  return std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0);
}

}  // namespace

CorpusFormat parse_corpus_format(const std::string& name) {
  if (name == "auto") return CorpusFormat::kAuto;
  if (name == "text") return CorpusFormat::kText;
  if (name == "sgml") return CorpusFormat::kSgml;
  if (name == "tsv") return CorpusFormat::kTsv;
  throw std::invalid_argument("unknown corpus format '" + name +
                              "' (expected auto, text, sgml or tsv)");
}

std::string format_name(CorpusFormat format) {
  switch (format) {
    case CorpusFormat::kAuto:
      return "auto";
    case CorpusFormat::kText:
      return "text";
    case CorpusFormat::kSgml:
      return "sgml";
    case CorpusFormat::kTsv:
      return "tsv";
  }
  return "unknown";
}

CorpusFormat detect_corpus_format(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  std::transform(name.begin(), name.end(), name.begin(), to_lower);
  std::string_view stem = name;
  if (ends_with(stem, ".gz")) stem.remove_suffix(3);
  if (ends_with(stem, ".sgm") || ends_with(stem, ".sgml")) return CorpusFormat::kSgml;
  if (ends_with(stem, ".tsv")) return CorpusFormat::kTsv;
  return CorpusFormat::kText;
}

CorpusFormat CorpusSpec::resolved_format() const {
  return format == CorpusFormat::kAuto ? detect_corpus_format(source) : format;
}

std::string CorpusSpec::describe() const {
  const CorpusFormat resolved = resolved_format();
  if (resolved == CorpusFormat::kTsv) {
    return fmt::format("{} [{},{}] (tsv)", source, tsv_source_column, tsv_target_column);
  }
  return fmt::format("{} + {} ({})", source, target, format_name(resolved));
}

// ---------------------------------------------------------------------------------------------
// LineSource

// Exactly one of `plain` and `gz` is open. Unread bytes are buffer[begin, end).
struct LineSource::Impl {
  std::FILE* plain = nullptr;
  gzFile gz = nullptr;
  std::vector<char> buffer = std::vector<char>(kBufferSize);
  std::size_t begin = 0;
  std::size_t end = 0;
  std::int64_t plain_read = 0;  // bytes fread so far
  bool eof = false;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (plain != nullptr) std::fclose(plain);
    if (gz != nullptr) gzclose(gz);
  }

  // Reads the next chunk into the buffer; 0 at end of file.
  std::size_t refill(const std::string& path, std::int64_t line_number);
};

std::size_t LineSource::Impl::refill(const std::string& path, std::int64_t line_number) {
  begin = 0;
  end = 0;
  if (eof) return 0;
  if (gz != nullptr) {
    const int count = gzread(gz, buffer.data(), static_cast<unsigned>(buffer.size()));
    // A truncated stream is not fatal to gzread (Z_BUF_ERROR, then 0 as if at the end): check
    // the error state after every read, not only a negative count.
    int code = Z_OK;
    const char* message = gzerror(gz, &code);
    if (count < 0 || code != Z_OK) {
      throw CorpusError(fmt::format("{}: corrupt or truncated gzip data after line {} ({})", path,
                                    line_number, code == Z_ERRNO ? std::strerror(errno) : message));
    }
    end = static_cast<std::size_t>(count);
  } else {
    end = std::fread(buffer.data(), 1, buffer.size(), plain);
    if (std::ferror(plain)) {
      throw CorpusError(
          fmt::format("{}: read error after line {}: {}", path, line_number, std::strerror(errno)));
    }
    plain_read += static_cast<std::int64_t>(end);
  }
  eof = end == 0;
  return end;
}

LineSource::LineSource(const std::string& path) : impl_(std::make_unique<Impl>()), path_(path) {
  std::error_code ec;
  // fopen succeeds on a directory under Linux; say what is wrong before the first read fails.
  if (std::filesystem::is_directory(path, ec)) throw_open_error(path, EISDIR);
  impl_->plain = std::fopen(path.c_str(), "rb");
  if (impl_->plain == nullptr) throw_open_error(path, errno);
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  file_size_ = ec ? 0 : static_cast<std::int64_t>(size);
  if (!has_gzip_magic(impl_->plain)) {
    std::rewind(impl_->plain);
    return;
  }
  std::fclose(impl_->plain);
  impl_->plain = nullptr;
  errno = 0;
  impl_->gz = gzopen(path.c_str(), "rb");
  if (impl_->gz == nullptr) throw_open_error(path, errno != 0 ? errno : ENOMEM);
  gzbuffer(impl_->gz, kGzipInputBuffer);
}

LineSource::~LineSource() = default;

bool LineSource::next(std::string& line) {
  Impl& in = *impl_;
  line.clear();
  bool have_bytes = false;
  for (;;) {
    if (in.begin == in.end && in.refill(path_, line_number_) == 0) {
      if (!have_bytes) return false;
      break;  // a last line without "\n" is still a line
    }
    const char* start = in.buffer.data() + in.begin;
    const std::size_t available = in.end - in.begin;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', available));
    const std::size_t length =
        newline != nullptr ? static_cast<std::size_t>(newline - start) : available;
    line.append(start, length);
    have_bytes = true;
    if (newline != nullptr) {
      in.begin += length + 1;
      break;
    }
    in.begin = in.end;  // the line continues in the next chunk
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  ++line_number_;
  return true;
}

std::int64_t LineSource::bytes_read() const {
  // gzoffset counts the compressed bytes zlib has consumed, not those waiting in its buffer.
  if (impl_->gz != nullptr) return std::max<std::int64_t>(0, gzoffset(impl_->gz));
  return impl_->plain_read - static_cast<std::int64_t>(impl_->end - impl_->begin);
}

namespace {

// The longer side's total, for the error message: read what is left of it.
std::int64_t count_all_lines(LineSource& lines) {
  std::string scratch;
  while (lines.next(scratch)) {
  }
  return lines.line_number();
}

// ---------------------------------------------------------------------------------------------
// Text: line i of the source translates to line i of the target.

class TextPairReader : public PairReader {
 public:
  TextPairReader(const std::string& source, const std::string& target)
      : source_(source), target_(target) {}

  bool next(SentencePair& pair) override {
    const bool has_source = source_.next(pair.source);
    const bool has_target = target_.next(pair.target);
    if (has_source && has_target) {
      pair.line = source_.line_number();
      return true;
    }
    if (has_source || has_target) throw_unequal();
    return false;
  }

  double progress() const override {
    return fraction(source_.bytes_read() + target_.bytes_read(), total_bytes());
  }
  std::int64_t total_bytes() const override { return source_.file_size() + target_.file_size(); }

 private:
  [[noreturn]] void throw_unequal() {
    const std::int64_t source_lines = count_all_lines(source_);
    const std::int64_t target_lines = count_all_lines(target_);
    throw CorpusError(fmt::format(
        "{} has {} lines but {} has {} lines (a parallel corpus needs one target line per source "
        "line)",
        source_.path(), source_lines, target_.path(), target_lines));
  }

  LineSource source_;
  LineSource target_;
};

// ---------------------------------------------------------------------------------------------
// TSV: one pair a line, two of its tab-separated fields.

class TsvPairReader : public PairReader {
 public:
  TsvPairReader(const std::string& path, int source_column, int target_column)
      : lines_(path),
        source_column_(static_cast<std::size_t>(source_column)),
        target_column_(static_cast<std::size_t>(target_column)),
        needed_(std::max(source_column_, target_column_) + 1) {}

  bool next(SentencePair& pair) override {
    if (!lines_.next(row_)) return false;
    std::string_view source_field;
    std::string_view target_field;
    const std::size_t fields = split_row(source_field, target_field);
    check_field_count(fields);
    pair.source.assign(source_field);
    pair.target.assign(target_field);
    pair.line = lines_.line_number();
    return true;
  }

  double progress() const override { return fraction(lines_.bytes_read(), total_bytes()); }
  std::int64_t total_bytes() const override { return lines_.file_size(); }

 private:
  // Counts the fields of row_ and points at the two wanted ones, without splitting into strings.
  std::size_t split_row(std::string_view& source_field, std::string_view& target_field) const {
    const std::string_view row = row_;
    std::size_t fields = 0;
    std::size_t start = 0;
    for (;;) {
      const std::size_t tab = row.find('\t', start);
      const std::string_view field = row.substr(start, tab - start);
      if (fields == source_column_) source_field = field;
      if (fields == target_column_) target_field = field;
      ++fields;
      if (tab == std::string_view::npos) return fields;
      start = tab + 1;
    }
  }

  // Rows must agree with the first one: a stray tab inside a sentence would shift columns.
  void check_field_count(std::size_t fields) {
    const auto where = fmt::format("{}:{}", lines_.path(), lines_.line_number());
    if (expected_ != 0 && fields != expected_) {
      throw CorpusError(fmt::format("{}: {} tab-separated field(s), expected {} as on line 1",
                                    where, fields, expected_));
    }
    if (fields < needed_) {
      throw CorpusError(
          fmt::format("{}: {} tab-separated field(s), expected at least {} (columns "
                      "{} and {}, 0-based)",
                      where, fields, needed_, source_column_, target_column_));
    }
    expected_ = fields;
  }

  LineSource lines_;
  std::string row_;
  std::size_t source_column_;
  std::size_t target_column_;
  std::size_t needed_;
  std::size_t expected_ = 0;  // field count of the first row; 0 before it
};

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
    id_ = attribute(tag_attributes(open, 4), "id");
    const std::size_t close = find_ci(line_, "</seg>", pos_);
    if (close == std::string::npos) fail("<seg> without </seg> on the same line");
    text.clear();
    append_unescaped(trim(std::string_view(line_).substr(pos_, close - pos_)), text);
    pos_ = close + 6;
    ++count_;
    segment_line_ = lines_.line_number();
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

class SgmlPairReader : public PairReader {
 public:
  SgmlPairReader(const std::string& source, const std::string& target)
      : source_(source), target_(target) {}

  bool next(SentencePair& pair) override {
    const bool has_source = source_.next(pair.source);
    const bool has_target = target_.next(pair.target);
    if (!has_source || !has_target) {
      if (has_source || has_target) throw_unequal();
      return false;
    }
    // A reference in another document order would pair wrong sentences without any other sign.
    if (source_.docid() != target_.docid() || source_.id() != target_.id()) throw_mismatch();
    pair.line = source_.count();
    return true;
  }

  double progress() const override {
    return fraction(source_.lines().bytes_read() + target_.lines().bytes_read(), total_bytes());
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

  SegmentSource source_;
  SegmentSource target_;
};

void validate(const CorpusSpec& spec, CorpusFormat format) {
  if (spec.source.empty()) throw std::invalid_argument("corpus: no source file given");
  if (format == CorpusFormat::kTsv) {
    if (!spec.target.empty() && spec.target != spec.source) {
      throw std::invalid_argument("corpus " + spec.describe() +
                                  ": a TSV corpus is one file; give no target file");
    }
    if (spec.tsv_source_column < 0 || spec.tsv_target_column < 0 ||
        spec.tsv_source_column == spec.tsv_target_column) {
      throw std::invalid_argument("corpus " + spec.describe() +
                                  ": TSV columns must be two different non-negative indices");
    }
  } else if (spec.target.empty()) {
    throw std::invalid_argument("corpus " + spec.source + ": a " + format_name(format) +
                                " corpus needs a target file beside the source");
  }
}

}  // namespace

std::unique_ptr<PairReader> open_corpus(const CorpusSpec& spec) {
  const CorpusFormat format = spec.resolved_format();
  validate(spec, format);
  switch (format) {
    case CorpusFormat::kSgml:
      return std::make_unique<SgmlPairReader>(spec.source, spec.target);
    case CorpusFormat::kTsv:
      return std::make_unique<TsvPairReader>(spec.source, spec.tsv_source_column,
                                             spec.tsv_target_column);
    default:
      return std::make_unique<TextPairReader>(spec.source, spec.target);
  }
}

}  // namespace nmt::preprocess
