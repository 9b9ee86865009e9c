// Fuzz harness: a shard file as nmt-train and nmt-translate open it (preprocess/shard_format.h,
// Shard::load, then every pair read). Two modes, by the first byte's bit 0:
//   0  structured: the rest of the input chooses the shard's arrays and attributes (offsets
//      from signed steps, tokens, index, num_pairs, vocab_size, the sources attribute's text),
//      which are written as HDF5 here, compressed (read into memory) or contiguous (mapped) by
//      bit 1, one dataset or attribute left out or given the wrong type by bits 2-7. This reaches
//      the reader's own checks with inputs HDF5 accepts.
//   1  raw: the rest of the input is the file's bytes, for HDF5's parsing of damaged files.
// Expected: std::runtime_error naming the file (Hdf5Error among them) or std::invalid_argument.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/hdf5_file.h"
#include "fuzz/fuzz_input.h"
#include "preprocess/shard_format.h"

namespace {

namespace pre = nmt::preprocess;

// The input's bytes as small numbers, zero once it is used up.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::int8_t signed_byte() { return static_cast<std::int8_t>(byte()); }
  std::int16_t word() {
    const auto low = byte();
    return static_cast<std::int16_t>(low | (byte() << 8));
  }
  std::string rest() {
    std::string text(reinterpret_cast<const char*>(data_ + pos_), size_ - pos_);
    pos_ = size_;
    return text;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// Offsets of one side: `count` values, each the previous plus a signed step.
std::vector<std::int64_t> offsets(Bytes& in, std::size_t count) {
  std::vector<std::int64_t> out;
  std::int64_t value = 0;
  for (std::size_t i = 0; i < count; ++i) {
    out.push_back(value);
    value += in.signed_byte();
  }
  return out;
}

std::vector<std::int32_t> tokens(Bytes& in) {
  std::vector<std::int32_t> out(in.byte() % 64);
  for (auto& token : out) token = in.word();
  return out;
}

void write_structured(const std::string& path, const std::uint8_t flags, Bytes& in) {
  const int damage = flags >> 2;  // which one thing to leave out or mistype; >= 16: none
  const std::size_t pairs = in.byte() % 16;
  const auto src_offsets = offsets(in, pairs + 1 + (in.byte() % 4 == 0 ? 1 : 0));
  const auto tgt_offsets = offsets(in, pairs + 1);
  const auto src_tokens = tokens(in);
  const auto tgt_tokens = tokens(in);
  std::vector<std::int64_t> index(pairs);
  for (auto& i : index) i = in.signed_byte();
  const std::int64_t num_pairs = damage == 9 ? in.signed_byte() : static_cast<std::int64_t>(pairs);
  const std::int64_t vocab_size = in.word();
  const std::string sources = in.rest();

  nmt::Hdf5Writer h5(path);
  const std::size_t chunk = (flags & 2) ? 16 : 0;
  const int compression = (flags & 2) ? 1 : 0;
  if (damage != 0) h5.write("/src/tokens", src_tokens, chunk, compression);
  if (damage != 1) h5.write("/src/offsets", src_offsets, chunk, compression);
  if (damage != 2) h5.write("/tgt/tokens", tgt_tokens, chunk, compression);
  if (damage == 3) {
    h5.write("/tgt/offsets", std::vector<double>(tgt_offsets.begin(), tgt_offsets.end()));
  } else {
    h5.write("/tgt/offsets", tgt_offsets, chunk, compression);
  }
  if (damage == 4) {
    h5.write("/index", std::vector<std::int32_t>(index.begin(), index.end()), chunk, compression);
  } else {
    h5.write("/index", index, chunk, compression);
  }
  if (damage == 5) {
    h5.set_attribute("/", "format", std::int64_t{1});
  } else {
    h5.set_attribute("/", "format", std::string(pre::kShardFormat));
  }
  if (damage == 6) {
    h5.set_attribute("/", "format_version", std::string("1"));
  } else {
    h5.set_attribute("/", "format_version", pre::kShardFormatVersion);
  }
  h5.set_attribute("/", "split", std::string("train"));
  h5.set_attribute("/", "shard_index", std::int64_t{0});
  if (damage != 7) h5.set_attribute("/", "num_pairs", num_pairs);
  if (damage == 8) {
    h5.set_attribute("/", "vocab_size", 1.5);
  } else {
    h5.set_attribute("/", "vocab_size", vocab_size);
  }
  h5.set_attribute("/", "vocab_sha256", std::string(64, '0'));
  h5.set_attribute("/", "sources", sources);
  h5.set_attribute("/", "cleaning", std::string("{}"));
  h5.save(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nmt::fuzz::quiet_logs();
  if (size < 1) return 0;
  const std::uint8_t flags = data[0];
  const auto& scratch = nmt::fuzz::scratch();
  std::string path;
  if (flags & 1) {
    path = scratch.write("train-00000.h5", nmt::fuzz::as_text(data + 1, size - 1));
  } else {
    path = (scratch.path() / "train-00000.h5").string();
    Bytes in(data + 1, size - 1);
    write_structured(path, flags, in);
  }
  try {
    const pre::Shard shard = pre::Shard::load(path);
    for (std::int64_t i = 0; i < shard.size(); ++i) {
      (void)shard.lengths(i);
      (void)shard.pair(i);
    }
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
