// Corpus readers: plain or gzipped line files read through one 1 MiB buffer (no per-line
// allocation once the caller's strings have grown), and three pairings on top of them: two text
// files in lockstep, one TSV file, and (in sgml_reader.cpp) two WMT SGML files.
#include "preprocess/corpus_reader.h"

#include "preprocess/sgml_reader.h"

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

#include "common/named_choices.h"

namespace nmt::preprocess {
namespace {

constexpr NamedChoices<CorpusFormat, 4> kCorpusFormats{{{{CorpusFormat::kAuto, "auto"},
                                                         {CorpusFormat::kText, "text"},
                                                         {CorpusFormat::kSgml, "sgml"},
                                                         {CorpusFormat::kTsv, "tsv"}}}};

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

}  // namespace

double read_fraction(std::int64_t done, std::int64_t total) {
  if (total <= 0) return 0.0;
  return std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0);
}

CorpusFormat parse_corpus_format(const std::string& name) {
  return kCorpusFormats.parse(name, "corpus format");
}

std::string format_name(CorpusFormat format) {
  return kCorpusFormats.name(format);
}

CorpusFormat detect_corpus_format(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  std::transform(name.begin(), name.end(), name.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
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

class TextPairReader : public TwoFilePairReader<LineSource> {
 public:
  using TwoFilePairReader::TwoFilePairReader;

  bool next(SentencePair& pair) override {
    if (!next_of_both(pair, [this] { throw_unequal(); })) return false;
    pair.line = source_.line_number();
    return true;
  }

  double progress() const override {
    return read_fraction(source_.bytes_read() + target_.bytes_read(), total_bytes());
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

  double progress() const override { return read_fraction(lines_.bytes_read(), total_bytes()); }
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
      return open_sgml_pair(spec.source, spec.target);
    case CorpusFormat::kTsv:
      return std::make_unique<TsvPairReader>(spec.source, spec.tsv_source_column,
                                             spec.tsv_target_column);
    default:
      return std::make_unique<TextPairReader>(spec.source, spec.target);
  }
}

}  // namespace nmt::preprocess
