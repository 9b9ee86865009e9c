#pragma once
// A small RAII layer over the HDF5 C API, shared by the shard format (preprocess/) and the
// checkpoint format (trainer/). It speaks in whole 1-D datasets and scalar attributes, which is all
// those formats need, and every error names the file and the object.

#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace nmt {

class Hdf5Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Owns one hid_t and closes it with the matching H5?close function.
class Hdf5Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Hdf5Handle() = default;
  Hdf5Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Hdf5Handle() { reset(); }
  Hdf5Handle(Hdf5Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) {
    other.id_ = -1;
  }
  Hdf5Handle& operator=(Hdf5Handle&& other) noexcept;
  Hdf5Handle(const Hdf5Handle&) = delete;
  Hdf5Handle& operator=(const Hdf5Handle&) = delete;

  hid_t get() const { return id_; }
  void reset();
  // Gives up ownership without closing (for a close whose result is checked).
  hid_t release();

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// What HDF5 wrote of a Mode::kStreaming file, and its reserved datasets (hdf5_streaming.h).
struct Hdf5StreamingImage;

class Hdf5File {
 public:
  // kCreate truncates an existing file. kInMemory builds the file in memory (`path` is only its
  // name in errors) for save(): HDF5 then never writes to disk itself, so a full disk is one
  // checked write() of ours, not an HDF5 flush that fails half-way and leaves the library's state
  // broken (a crash at the next file operation or at exit).
  // kStreaming keeps that property in bounded memory, for files of any size: HDF5 writes into a
  // sparse in-memory image through a driver of ours (the metadata and the small datasets written
  // with write()/write_array()), while the bulk of the data goes into datasets only reserved here
  // (reserve_array()), whose bytes save(path, fill) copies from the caller's buffers straight
  // into the file at their offsets.
  enum class Mode { kRead, kCreate, kInMemory, kStreaming };

  Hdf5File(const std::string& path, Mode mode);
  ~Hdf5File();
  Hdf5File(Hdf5File&& other) noexcept;
  Hdf5File& operator=(Hdf5File&& other) noexcept;
  const std::string& path() const { return path_; }
  // kInMemory: writes the finished file to `path` with write_file_atomically (a temporary name,
  // every write checked, fsync, rename; on failure the temporary is removed and the error names
  // the file and the cause, e.g. "No space left on device"). Takes a copy of the image: the peak
  // memory is twice the file's size. For a kStreaming file it is save(path, {}), which suits
  // one without reserved datasets.
  void save(const std::string& path);

  // kStreaming: an N-dimensional dataset of T whose bytes save() takes from its `fill`: contiguous,
  // given its place in the file now, never written by HDF5. Attributes may be set on it.
  template <typename T>
  void reserve_array(const std::string& dataset, const std::vector<std::int64_t>& shape);
  // Receives a reserved dataset's bytes, in order, in one piece or several.
  using ByteSink = std::function<void(const void* data, std::size_t bytes)>;
  // Hands reserved dataset `index` (in the order reserved) to `write`, all of its bytes.
  using ReservedFill = std::function<void(std::size_t index, const ByteSink& write)>;
  // kStreaming: closes the HDF5 file (no HDF5 call on it after this) and writes it to `path`
  // atomically: refuses, as "No space left on device", a file larger than the free space of the
  // target's file system, then writes a temporary name beside `path` (space reserved with
  // fallocate where the file system can, every write checked), the image HDF5 wrote, each
  // reserved dataset's bytes as `fill` hands them, fsync, rename, fsync of the directory. On any
  // failure (an error of ours naming the file and the cause, or an exception from `fill`) the
  // temporary is removed and an earlier file at `path` is untouched. Memory: the image (the
  // metadata) and what `fill` holds.
  void save(const std::string& path, const ReservedFill& fill);

  // Creates every missing group on a "/a/b/c" path.
  void create_group(const std::string& group);
  bool exists(const std::string& object) const;

  // 1-D datasets. `chunk` > 0 stores the data in chunks of that many elements, compressed with
  // deflate at `deflate_level` (0: chunked, uncompressed). Readers need no settings for either.
  template <typename T>
  void write(const std::string& dataset, const std::vector<T>& data, std::size_t chunk = 0,
             int deflate_level = 4);
  template <typename T>
  std::vector<T> read(const std::string& dataset) const;
  // Number of elements of a 1-D dataset.
  std::size_t length(const std::string& dataset) const;

  // N-dimensional arrays (row-major), for parameters and optimizer state.
  template <typename T>
  void write_array(const std::string& dataset, const T* data,
                   const std::vector<std::int64_t>& shape);
  std::vector<std::int64_t> shape(const std::string& dataset) const;
  // Reads a whole dataset of `count` elements into `out` (converting to T).
  template <typename T>
  void read_array(const std::string& dataset, T* out, std::size_t count) const;
  // Names of the direct children of a group, sorted.
  std::vector<std::string> children(const std::string& group) const;

  // Scalar attributes on a group or dataset ("/" for the file).
  void set_attribute(const std::string& object, const std::string& name, const std::string& value);
  void set_attribute(const std::string& object, const std::string& name, std::int64_t value);
  void set_attribute(const std::string& object, const std::string& name, double value);
  std::string string_attribute(const std::string& object, const std::string& name) const;
  std::int64_t int_attribute(const std::string& object, const std::string& name) const;
  double double_attribute(const std::string& object, const std::string& name) const;
  bool has_attribute(const std::string& object, const std::string& name) const;

  // Flushes HDF5 buffers to the operating system.
  void flush();

 private:
  Hdf5Handle open_object(const std::string& object) const;
  Hdf5Handle open_attribute(const std::string& object, const std::string& name) const;
  H5T_class_t attribute_class(const Hdf5Handle& attr) const;
  void write_raw(const std::string& dataset, hid_t type, const void* data, std::size_t n,
                 std::size_t chunk, int deflate_level);
  void write_nd(const std::string& dataset, hid_t type, const void* data,
                const std::vector<std::int64_t>& shape);
  void reserve_nd(const std::string& dataset, hid_t type, const std::vector<std::int64_t>& shape);
  Hdf5Handle create_nd(const std::string& dataset, hid_t type,
                       const std::vector<std::int64_t>& shape, hid_t props);
  void read_raw(const std::string& dataset, hid_t type, void* data, std::size_t n) const;
  void write_attribute(const std::string& object, const std::string& name, hid_t type,
                       const void* value);
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  // kStreaming: what HDF5 wrote and the reserved datasets. Declared before file_, so that it
  // outlives the HDF5 file, which writes into it until closed.
  std::unique_ptr<Hdf5StreamingImage> image_;
  Hdf5Handle file_;
};

// HDF5's native integer type of that many bytes (1, 2, 4 or 8) and signedness, and its native
// floating-point type of that many bytes (4 or 8). Throw Hdf5Error for any other size.
hid_t hdf5_integer_type(std::size_t bytes, bool is_signed);
hid_t hdf5_float_type(std::size_t bytes);

// The HDF5 native type of T (an integer or floating-point type): chosen by its size and
// signedness, as HDF5 defines its own native types.
template <typename T>
hid_t hdf5_native_type() {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                "HDF5 datasets here hold integers or floating-point numbers");
  if constexpr (std::is_floating_point_v<T>) {
    return hdf5_float_type(sizeof(T));
  } else {
    return hdf5_integer_type(sizeof(T), std::is_signed_v<T>);
  }
}

template <typename T>
void Hdf5File::write(const std::string& dataset, const std::vector<T>& data, std::size_t chunk,
                     int deflate_level) {
  write_raw(dataset, hdf5_native_type<T>(), data.data(), data.size(), chunk, deflate_level);
}

template <typename T>
void Hdf5File::write_array(const std::string& dataset, const T* data,
                           const std::vector<std::int64_t>& shape) {
  write_nd(dataset, hdf5_native_type<T>(), data, shape);
}

template <typename T>
void Hdf5File::reserve_array(const std::string& dataset, const std::vector<std::int64_t>& shape) {
  reserve_nd(dataset, hdf5_native_type<T>(), shape);
}

template <typename T>
void Hdf5File::read_array(const std::string& dataset, T* out, std::size_t count) const {
  read_raw(dataset, hdf5_native_type<T>(), out, count);
}

template <typename T>
std::vector<T> Hdf5File::read(const std::string& dataset) const {
  std::vector<T> data(length(dataset));
  read_raw(dataset, hdf5_native_type<T>(), data.data(), data.size());
  return data;
}

}  // namespace nmt
