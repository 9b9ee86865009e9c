// TensorBoard event files (tracker/view/tensorboard_events.h): CRC-32C against its published test
// vectors, the TFRecord mask, and framed Events taken apart by a small protobuf reader written
// here from the wire-format rules (varint, fixed64, fixed32, length-delimited), so that the test
// checks the bytes, not the encoder against itself. The real TensorBoard reads an export in
// tests/scripts/tracker_tensorboard_export_test.sh (CTest: nmt-tracker_export_tensorboard).

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracker/view/tensorboard_events.h"

namespace nmt::tracker::tensorboard {
namespace {

// One protobuf field as read off the wire.
struct Field {
  std::uint32_t number = 0;
  std::uint32_t wire_type = 0;
  std::uint64_t integer = 0;  // varint, fixed64, fixed32
  std::string bytes;          // length-delimited
};

class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}
  bool done() const { return at_ == data_.size(); }

  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const auto byte = static_cast<std::uint8_t>(take(1)[0]);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    throw std::runtime_error("varint longer than 10 bytes");
  }

  std::uint64_t little_endian(std::size_t size) {
    const std::string_view bytes = take(size);
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < size; ++i) {
      value |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(bytes[i])) << (8 * i);
    }
    return value;
  }

  Field field() {
    Field f;
    const std::uint64_t key = varint();
    f.number = static_cast<std::uint32_t>(key >> 3);
    f.wire_type = static_cast<std::uint32_t>(key & 7);
    switch (f.wire_type) {
      case 0:
        f.integer = varint();
        break;
      case 1:
        f.integer = little_endian(8);
        break;
      case 2:
        f.bytes = std::string(take(varint()));
        break;
      case 5:
        f.integer = little_endian(4);
        break;
      default:
        throw std::runtime_error("unexpected wire type " + std::to_string(f.wire_type));
    }
    return f;
  }

  std::vector<Field> all_fields() {
    std::vector<Field> fields;
    while (!done()) fields.push_back(field());
    return fields;
  }

  std::string_view take(std::size_t size) {
    if (size > data_.size() - at_) throw std::runtime_error("message ends early");
    const std::string_view out = data_.substr(at_, size);
    at_ += size;
    return out;
  }

 private:
  std::string_view data_;
  std::size_t at_ = 0;
};

double as_double(std::uint64_t bits) {
  double value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

float as_float(std::uint64_t bits) {
  const auto narrow = static_cast<std::uint32_t>(bits);
  float value = 0;
  std::memcpy(&value, &narrow, sizeof value);
  return value;
}

// A TFRecord's data, after checking its length and both masked CRCs (computed with the tested
// crc32c, whose vectors are checked below).
std::string unframe(WireReader& reader) {
  const std::string_view length_bytes = reader.take(8);
  WireReader length_reader(length_bytes);
  const std::uint64_t length = length_reader.little_endian(8);
  EXPECT_EQ(reader.little_endian(4), mask_crc(crc32c(length_bytes)));
  const std::string data(reader.take(length));
  EXPECT_EQ(reader.little_endian(4), mask_crc(crc32c(data)));
  return data;
}

struct DecodedScalar {
  double wall_time = 0;
  std::int64_t step = 0;
  std::string tag;
  float value = 0;
};

DecodedScalar decode_scalar_event(const std::string& event) {
  DecodedScalar out;
  const std::vector<Field> fields = WireReader(event).all_fields();
  EXPECT_EQ(fields.size(), 3u);
  for (const Field& f : fields) {
    if (f.number == 1) {
      EXPECT_EQ(f.wire_type, 1u) << "wall_time is a double";
      out.wall_time = as_double(f.integer);
    } else if (f.number == 2) {
      EXPECT_EQ(f.wire_type, 0u) << "step is an int64 varint";
      out.step = static_cast<std::int64_t>(f.integer);
    } else if (f.number == 5) {
      EXPECT_EQ(f.wire_type, 2u) << "summary is a message";
      const std::vector<Field> summary = WireReader(f.bytes).all_fields();
      EXPECT_EQ(summary.size(), 1u);
      EXPECT_EQ(summary.at(0).number, 1u) << "Summary.value";
      EXPECT_EQ(summary.at(0).wire_type, 2u);
      for (const Field& v : WireReader(summary.at(0).bytes).all_fields()) {
        if (v.number == 1) {
          EXPECT_EQ(v.wire_type, 2u) << "tag is a string";
          out.tag = v.bytes;
        } else {
          EXPECT_EQ(v.number, 2u) << "Summary.Value.simple_value";
          EXPECT_EQ(v.wire_type, 5u) << "simple_value is a float";
          out.value = as_float(v.integer);
        }
      }
    } else {
      ADD_FAILURE() << "unexpected Event field " << f.number;
    }
  }
  return out;
}

TEST(TensorboardEvents, Crc32cMatchesThePublishedVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  // RFC 3720 (iSCSI), appendix B.4: 32 bytes of zeros, of ones, ascending.
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending += static_cast<char>(i);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
}

TEST(TensorboardEvents, MaskRotatesAndAddsTheConstant) {
  EXPECT_EQ(mask_crc(0), 0xa282ead8u);
  // 0xE3069283 rotated right by 15 is 0x2507C60D; plus 0xa282ead8 is 0xC78AB0E5.
  EXPECT_EQ(mask_crc(0xE3069283u), 0xC78AB0E5u);
  // The addition wraps around 2^32.
  EXPECT_EQ(mask_crc(0xffffffffu), 0xa282ead7u);
}

TEST(TensorboardEvents, FramedScalarEventDecodesFieldByField) {
  const std::string data = encode_scalar_event(1733400000.25, 42, "train/loss", 2.5f);
  const std::string record = frame_record(data);
  ASSERT_EQ(record.size(), 8 + 4 + data.size() + 4);
  WireReader reader(record);
  const std::string unframed = unframe(reader);
  EXPECT_TRUE(reader.done());
  EXPECT_EQ(unframed, data);
  const DecodedScalar scalar = decode_scalar_event(unframed);
  EXPECT_EQ(scalar.wall_time, 1733400000.25);
  EXPECT_EQ(scalar.step, 42);
  EXPECT_EQ(scalar.tag, "train/loss");
  EXPECT_EQ(scalar.value, 2.5f);
}

TEST(TensorboardEvents, LargeAndNegativeStepsAndLongTagsSurvive) {
  const std::string long_tag(300, 'k');  // a length of two varint bytes
  for (const std::int64_t step :
       {std::int64_t{0}, std::int64_t{-3}, std::int64_t{1} << 40, INT64_MAX, INT64_MIN}) {
    const DecodedScalar scalar =
        decode_scalar_event(encode_scalar_event(0.5, step, long_tag, -1.0e-3f));
    EXPECT_EQ(scalar.step, step);
    EXPECT_EQ(scalar.tag, long_tag);
    EXPECT_EQ(scalar.value, -1.0e-3f);
  }
}

TEST(TensorboardEvents, DoublesBecomeTheNearestFloat) {
  EXPECT_EQ(to_simple_value(0.1), 0.1f);
  EXPECT_EQ(to_simple_value(-2.5), -2.5f);
  EXPECT_EQ(to_simple_value(1e39), std::numeric_limits<float>::infinity());
  EXPECT_EQ(to_simple_value(-1e39), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(to_simple_value(std::nan(""))));
}

TEST(TensorboardEvents, FileVersionEventNamesVersion2) {
  const std::vector<Field> fields = WireReader(encode_file_version_event(12.5)).all_fields();
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0].number, 1u);
  EXPECT_EQ(as_double(fields[0].integer), 12.5);
  EXPECT_EQ(fields[1].number, 3u);
  EXPECT_EQ(fields[1].wire_type, 2u);
  EXPECT_EQ(fields[1].bytes, "brain.Event:2");
}

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tensorboard_events_test." + std::to_string(::getpid()) + "." + name);
  std::filesystem::remove_all(dir);
  return dir;
}

std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

TEST(TensorboardEvents, WriterCommitsOneFileOfRecords) {
  const auto dir = fresh_dir("commit") / "nested";
  std::string path;
  {
    EventFileWriter writer(dir.string(), 1733400123.9, "node/7");
    for (int i = 0; i < 5000; ++i) {  // several flushes of the buffer
      writer.write_scalar(1733400124.0 + i, i * 10, i % 2 ? "a" : "b", static_cast<float>(i));
    }
    // Nothing a reader globs for exists before the commit.
    for (const auto& name : names_in(dir)) EXPECT_EQ(name.find("tfevents"), std::string::npos);
    writer.commit();
    path = writer.path();
    EXPECT_EQ(writer.scalars_written(), 5000u);
  }
  EXPECT_EQ(std::filesystem::path(path).filename().string(),
            "events.out.tfevents.1733400123.node_7.nmt-tracker");
  EXPECT_EQ(names_in(dir).size(), 1u) << "the temporary file is gone";

  std::ifstream in(path, std::ios::binary);
  const std::string contents{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  WireReader reader(contents);
  const std::vector<Field> first = WireReader(unframe(reader)).all_fields();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[1].bytes, "brain.Event:2");
  for (int i = 0; i < 5000; ++i) {
    const DecodedScalar scalar = decode_scalar_event(unframe(reader));
    ASSERT_EQ(scalar.step, i * 10);
    EXPECT_EQ(scalar.tag, i % 2 ? "a" : "b");
    EXPECT_EQ(scalar.value, static_cast<float>(i));
    EXPECT_EQ(scalar.wall_time, 1733400124.0 + i);
  }
  EXPECT_TRUE(reader.done());
  std::filesystem::remove_all(dir.parent_path());
}

TEST(TensorboardEvents, WriterDestroyedUncommittedLeavesNothing) {
  const auto dir = fresh_dir("abandon");
  {
    EventFileWriter writer(dir.string(), 1.0, "host");
    writer.write_scalar(1.0, 1, "x", 1.0f);
  }
  EXPECT_TRUE(names_in(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST(TensorboardEvents, WriterNamesTheDirectoryItCannotCreate) {
  const auto dir = fresh_dir("blocked");
  std::ofstream(dir.string()) << "a file, not a directory";
  try {
    EventFileWriter writer((dir / "sub").string(), 1.0, "host");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.string()), std::string::npos) << e.what();
  }
  std::filesystem::remove(dir);
}

}  // namespace
}  // namespace nmt::tracker::tensorboard
