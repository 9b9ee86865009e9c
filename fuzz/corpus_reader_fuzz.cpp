// Fuzz harness: the corpus readers of nmt-preprocess (preprocess/corpus_reader.h: plain text and
// gzip lines, WMT SGML pairing, TSV columns) and the cleaning filters after them. The input is
//   FLAGS SOURCE <RS> TARGET
// FLAGS, one byte: bits 0-1 the format (text, SGML, TSV, text), bit 2 gzip the source, bit 3 gzip
// the target (valid streams; a raw input with gzip's magic bytes tests corrupt ones), bits 4-7 the
// TSV source column (the target column is the next one). Expected: CorpusError naming the file and
// line, or std::invalid_argument.

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz/fuzz_input.h"
#include "preprocess/cleaning.h"
#include "preprocess/corpus_reader.h"

namespace {

namespace pre = nmt::preprocess;

// `text` as a gzip stream.
std::string gzip(std::string_view text) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nmt::fuzz::quiet_logs();
  if (size < 1) return 0;
  const std::uint8_t flags = data[0];
  const auto parts = nmt::fuzz::split_parts(nmt::fuzz::as_text(data + 1, size - 1), 2);
  const auto& dir = nmt::fuzz::scratch();
  pre::CorpusSpec spec;
  switch (flags & 3) {
    case 1:
      spec.format = pre::CorpusFormat::kSgml;
      break;
    case 2:
      spec.format = pre::CorpusFormat::kTsv;
      break;
    default:
      spec.format = pre::CorpusFormat::kText;
  }
  spec.source = dir.write("corpus.src", (flags & 4) ? gzip(parts[0]) : parts[0]);
  if (spec.format == pre::CorpusFormat::kTsv) {
    spec.tsv_source_column = flags >> 4;
    spec.tsv_target_column = spec.tsv_source_column + 1;
  } else {
    spec.target = dir.write("corpus.tgt", (flags & 8) ? gzip(parts[1]) : parts[1]);
  }
  pre::CleaningOptions options;
  options.dedupe = true;
  pre::PairCleaner cleaner(options, /*filter=*/true);
  try {
    const auto reader = pre::open_corpus(spec);
    pre::SentencePair pair;
    while (reader->next(pair)) {
      (void)reader->progress();
      cleaner.apply(pair);
    }
  } catch (const pre::CorpusError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
