#include "tracker/view/tensorboard_events.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "common/atomic_file.h"

namespace nmt::tracker::tensorboard {
namespace {

constexpr std::uint32_t kCastagnoli = 0x82F63B78u;  // 0x1EDC6F41, bit-reversed
constexpr std::uint32_t kMaskDelta = 0xa282ead8u;
constexpr std::size_t kFlushBytes = 1 << 16;

constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kCastagnoli : 0u);
    table[i] = crc;
  }
  return table;
}
constexpr std::array<std::uint32_t, 256> kCrcTable = make_crc_table();

// Protobuf wire types.
constexpr std::uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

// Event fields (event.proto), Summary and Summary.Value fields (summary.proto).
constexpr std::uint32_t kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3,
                        kEventSummary = 5;
constexpr std::uint32_t kSummaryValue = 1;
constexpr std::uint32_t kValueTag = 1, kValueSimpleValue = 2;

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

// Little-endian, whatever the host's byte order.
template <class Unsigned>
void put_little_endian(std::string& out, Unsigned value) {
  for (std::size_t i = 0; i < sizeof(Unsigned); ++i) {
    out += static_cast<char>((value >> (8 * i)) & 0xff);
  }
}

void put_key(std::string& out, std::uint32_t field, std::uint32_t wire_type) {
  put_varint(out, (static_cast<std::uint64_t>(field) << 3) | wire_type);
}

void put_double(std::string& out, std::uint32_t field, double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  put_key(out, field, kFixed64);
  put_little_endian(out, bits);
}

void put_float(std::string& out, std::uint32_t field, float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  put_key(out, field, kFixed32);
  put_little_endian(out, bits);
}

// int64 is a plain varint of the two's complement: a negative step takes 10 bytes.
void put_int64(std::string& out, std::uint32_t field, std::int64_t value) {
  put_key(out, field, kVarint);
  put_varint(out, static_cast<std::uint64_t>(value));
}

void put_bytes(std::string& out, std::uint32_t field, std::string_view bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

[[noreturn]] void fail(const std::string& path, const char* what) {
  throw std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

std::uint32_t crc32c(std::string_view data) {
  std::uint32_t crc = 0xffffffffu;
  for (const char c : data) {
    crc = kCrcTable[(crc ^ static_cast<unsigned char>(c)) & 0xff] ^ (crc >> 8);
  }
  return crc ^ 0xffffffffu;
}

std::uint32_t mask_crc(std::uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}

std::string frame_record(std::string_view data) {
  std::string record;
  record.reserve(data.size() + 16);
  put_little_endian(record, static_cast<std::uint64_t>(data.size()));
  put_little_endian(record, mask_crc(crc32c(record)));
  record.append(data.data(), data.size());
  put_little_endian(record, mask_crc(crc32c(data)));
  return record;
}

std::string encode_file_version_event(double wall_time) {
  std::string event;
  put_double(event, kEventWallTime, wall_time);
  put_bytes(event, kEventFileVersion, "brain.Event:2");
  return event;
}

std::string encode_scalar_event(double wall_time, std::int64_t step, std::string_view tag,
                                float value) {
  std::string summary_value;
  put_bytes(summary_value, kValueTag, tag);
  put_float(summary_value, kValueSimpleValue, value);
  std::string summary;
  put_bytes(summary, kSummaryValue, summary_value);
  std::string event;
  put_double(event, kEventWallTime, wall_time);
  put_int64(event, kEventStep, step);
  put_bytes(event, kEventSummary, summary);
  return event;
}

EventFileWriter::EventFileWriter(const std::string& dir, double wall_time, const std::string& host)
    : dir_(dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw std::runtime_error(dir + ": cannot create the directory: " + error.message());
  std::string host_part = host.empty() ? "localhost" : host;
  for (char& c : host_part) {
    if (c == '/') c = '_';
  }
  const auto seconds = static_cast<long long>(std::floor(wall_time));
  path_ = (std::filesystem::path(dir) /
           ("events.out.tfevents." + std::to_string(seconds) + "." + host_part + ".nmt-tracker"))
              .string();
  // Hidden, and without "tfevents" in it: TensorBoard never reads a half-written file.
  temp_path_ =
      (std::filesystem::path(dir) / (".nmt-tracker-export." + std::to_string(::getpid()) + ".tmp"))
          .string();
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(temp_path_, "cannot create");
  write_record(encode_file_version_event(wall_time));
}

EventFileWriter::~EventFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

float to_simple_value(double value) {
  // A double past float's range converts with undefined behaviour; its infinity is what it rounds
  // to.
  if (value > std::numeric_limits<float>::max()) return std::numeric_limits<float>::infinity();
  if (value < -std::numeric_limits<float>::max()) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(value);
}

void EventFileWriter::write_scalar(double wall_time, std::int64_t step, std::string_view tag,
                                   double value) {
  write_record(encode_scalar_event(wall_time, step, tag, to_simple_value(value)));
  ++scalars_;
}

void EventFileWriter::write_record(std::string_view data) {
  if (committed_) throw std::logic_error(path_ + ": written after commit()");
  buffer_ += frame_record(data);
  if (buffer_.size() >= kFlushBytes) flush();
}

void EventFileWriter::flush() {
  std::size_t written = 0;
  while (written < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + written, buffer_.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(temp_path_, "write failed");
    written += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void EventFileWriter::commit() {
  if (committed_) throw std::logic_error(path_ + ": commit() called twice");
  flush();
  const int fd = fd_;
  fd_ = -1;
  if (::fsync(fd) != 0) {
    const int cause = errno;
    ::close(fd);
    errno = cause;
    fail(temp_path_, "fsync failed");
  }
  if (::close(fd) != 0) fail(temp_path_, "close failed");
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) fail(path_, "rename failed");
  committed_ = true;
  fsync_path(dir_);
}

std::string local_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace nmt::tracker::tensorboard
