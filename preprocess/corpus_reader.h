#pragma once
// Readers for the parallel corpora WMT ships: a source/target pair of plain-text files (optionally
// gzipped), a pair of WMT SGML files (<seg id="..."> as the newstest sets), or one TSV file with
// one pair a line (news-commentary). Each reader streams: memory does not grow with the corpus.
//
// Errors are CorpusError and name the file, the line and what was expected: unequal line counts
// (both files, both counts), SGML segment ids that differ between source and reference, SGML
// <seg> elements nested, not closed on their line or by the end of the file, or a </seg> with none
// open, TSV rows with the wrong number of fields, missing or unreadable files.

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nmt::preprocess {

class CorpusError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class CorpusFormat { kAuto, kText, kSgml, kTsv };

// "auto", "text", "sgml", "tsv"; throws std::invalid_argument otherwise.
CorpusFormat parse_corpus_format(const std::string& name);
std::string format_name(CorpusFormat format);

// The format implied by a file name, after a trailing ".gz": ".sgm"/".sgml" -> SGML,
// ".tsv" -> TSV, anything else -> text.
CorpusFormat detect_corpus_format(const std::string& path);

// One corpus: for text and SGML a source and a target file; for TSV `source` is the file and
// `target` is empty, and the two columns are chosen by tsv_columns.
struct CorpusSpec {
  std::string source;
  std::string target;
  CorpusFormat format = CorpusFormat::kAuto;  // kAuto: detect_corpus_format(source)
  int tsv_source_column = 0;                  // 0-based columns of a TSV row
  int tsv_target_column = 1;
  CorpusFormat resolved_format() const;
  std::string describe() const;  // "a.en + a.de (text)" for logs and the manifest
};

// Reads lines of a plain or gzip-compressed file (detected from its magic bytes, not its name),
// without the line terminator ("\n" or "\r\n"). Tracks the line number and the bytes consumed of
// the file on disk, for progress.
class LineSource {
 public:
  explicit LineSource(const std::string& path);
  ~LineSource();
  LineSource(const LineSource&) = delete;
  LineSource& operator=(const LineSource&) = delete;

  // False at end of file. Throws CorpusError on a read error (e.g. a corrupt gzip stream).
  bool next(std::string& line);
  const std::string& path() const { return path_; }
  std::int64_t line_number() const { return line_number_; }  // of the last line returned (1-based)
  std::int64_t bytes_read() const;                           // compressed bytes for gzip input
  std::int64_t file_size() const { return file_size_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  std::int64_t line_number_ = 0;
  std::int64_t file_size_ = 0;
};

struct SentencePair {
  std::string source;
  std::string target;
  std::int64_t line = 0;  // 1-based line (text, TSV) or segment position (SGML) in the corpus
};

class PairReader {
 public:
  virtual ~PairReader() = default;
  // False when the corpus is exhausted; throws CorpusError on malformed input. Checks that both
  // sides end together.
  virtual bool next(SentencePair& pair) = 0;
  // Fraction of the input consumed, in [0, 1], for progress and ETA.
  virtual double progress() const = 0;
  virtual std::int64_t total_bytes() const = 0;
};

std::unique_ptr<PairReader> open_corpus(const CorpusSpec& spec);

// A parallel corpus read from two files in step, one per side. `Side` reads one file:
// next(std::string&) is false at its end.
template <typename Side>
class TwoFilePairReader : public PairReader {
 public:
  TwoFilePairReader(const std::string& source, const std::string& target)
      : source_(source), target_(target) {}

 protected:
  // The next sentence of each side into `pair`: true when both sides have one, false when both
  // have ended; when only one has, `unequal()` throws the reader's error.
  template <typename Unequal>
  bool next_of_both(SentencePair& pair, Unequal unequal) {
    const bool has_source = source_.next(pair.source);
    const bool has_target = target_.next(pair.target);
    if (has_source != has_target) unequal();
    return has_source && has_target;
  }

  Side source_;
  Side target_;
};

// done / total clamped to [0, 1]; 0 when the total is unknown (an empty file or a pipe).
double read_fraction(std::int64_t done, std::int64_t total);

}  // namespace nmt::preprocess
