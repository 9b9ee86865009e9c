#pragma once
// TensorBoard event files, written by hand: what `nmt-tracker export --format tensorboard` writes,
// so that `tensorboard --logdir DIR` shows a run's curves without TensorFlow or a protobuf library.
//
// A file is a TFRecord stream: each record is its length (uint64, little-endian), the masked
// CRC-32C of those 8 bytes, the data, and the masked CRC-32C of the data. Each record's data is
// one serialized `tensorflow.Event` (tensorflow/core/util/event.proto): wall_time (field 1,
// double), step (2, int64), then either file_version (3, string; the first record says
// "brain.Event:2") or summary (5, a `Summary` whose repeated `value` (1) holds a tag (1, string)
// and a simple_value (2, float)). Version 2 matters: with it TensorBoard keeps a series whose
// steps start again from 0 (one series after another), instead of purging "orphaned" points.
//
// Scalars are float32 in the format: a double loses its digits past about 7 significant ones.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nmt::tracker::tensorboard {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), from a 256-entry table.
// crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(std::string_view data);

// The TFRecord mask of a CRC: rotated right by 15 bits, plus 0xa282ead8.
std::uint32_t mask_crc(std::uint32_t crc);

// One TFRecord: length, masked CRC of the length, data, masked CRC of the data.
std::string frame_record(std::string_view data);

// A serialized Event that opens a file: wall_time and file_version "brain.Event:2".
std::string encode_file_version_event(double wall_time);

// A serialized Event holding one scalar: wall_time, step and a summary with one value.
std::string encode_scalar_event(double wall_time, std::int64_t step, std::string_view tag,
                                float value);

// A double as a simple_value: the nearest float; beyond float's range, an infinity of its sign.
float to_simple_value(double value);

// Writes DIR/events.out.tfevents.<unix seconds>.<host>.nmt-tracker, never seen half-written: the
// records go to a hidden temporary file in DIR (a name TensorBoard does not read), buffered, and
// commit() fsyncs it and renames it into place. Destroyed uncommitted, the temporary is removed.
// Errors are std::runtime_error naming the file.
class EventFileWriter {
 public:
  // Creates DIR (and its parents) when missing; writes the file_version record at `wall_time`,
  // whose whole seconds also name the file. `host` is part of the name ("/" is replaced).
  EventFileWriter(const std::string& dir, double wall_time, const std::string& host);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // `value` becomes the nearest float (to_simple_value).
  void write_scalar(double wall_time, std::int64_t step, std::string_view tag, double value);
  // Flushes, fsyncs, renames over path() and fsyncs DIR. Nothing may be written after it.
  void commit();

  const std::string& path() const { return path_; }
  std::size_t scalars_written() const { return scalars_; }

 private:
  void write_record(std::string_view data);
  void flush();

  std::string dir_, path_, temp_path_;
  int fd_ = -1;
  std::string buffer_;
  std::size_t scalars_ = 0;
  bool committed_ = false;
};

// This machine's host name, for the file name; "localhost" when it cannot be read.
std::string local_host_name();

}  // namespace nmt::tracker::tensorboard
