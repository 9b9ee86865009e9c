#pragma once
// A small RAII layer over the HDF5 C API, shared by the shard format (preprocess/) and the
// checkpoint format (trainer/), in two roles: a reader and an atomic writer. It speaks in whole
// datasets and scalar attributes, which is all those formats need, and every error names the file
// and the object.

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

// What HDF5 wrote of an Hdf5Writer's file, and its reserved datasets (hdf5_streaming.h).
struct Hdf5StreamingImage;

// An open HDF5 file, in either of its two roles: Hdf5Reader (a file on disk, read-only) or
// Hdf5Writer (a file built in memory, then saved atomically). Both answer what a file holds by
// name and its scalar attributes.
class Hdf5File {
 public:
  ~Hdf5File();
  Hdf5File(Hdf5File&& other) noexcept;
  Hdf5File& operator=(Hdf5File&& other) noexcept;
  // The file's name in errors: the file read, or where a writer's file is to be saved.
  const std::string& path() const { return path_; }

  bool exists(const std::string& object) const;
  // Scalar attributes on a group or dataset ("/" for the file).
  std::string string_attribute(const std::string& object, const std::string& name) const;
  std::int64_t int_attribute(const std::string& object, const std::string& name) const;
  double double_attribute(const std::string& object, const std::string& name) const;
  bool has_attribute(const std::string& object, const std::string& name) const;

 protected:
  explicit Hdf5File(std::string path);
  Hdf5Handle open_object(const std::string& object) const;
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  // A writer's image: what HDF5 wrote and the reserved datasets. Declared before file_, so that
  // it outlives the HDF5 file, which writes into it until closed.
  std::unique_ptr<Hdf5StreamingImage> image_;
  Hdf5Handle file_;

 private:
  Hdf5Handle open_attribute(const std::string& object, const std::string& name) const;
  H5T_class_t attribute_class(const Hdf5Handle& attr) const;
};

// A file on disk, opened read-only: shards and checkpoints as their readers see them.
class Hdf5Reader : public Hdf5File {
 public:
  // Throws Hdf5Error naming `path` when it is missing, unreadable, truncated or not HDF5.
  explicit Hdf5Reader(const std::string& path);

  // A 1-D dataset, whole; its number of elements.
  template <typename T>
  std::vector<T> read(const std::string& dataset) const;
  std::size_t length(const std::string& dataset) const;
  // An N-dimensional dataset (row-major): its shape, and all of its `count` elements into `out`
  // (converted to T).
  std::vector<std::int64_t> shape(const std::string& dataset) const;
  template <typename T>
  void read_array(const std::string& dataset, T* out, std::size_t count) const;
  // Names of the direct children of a group, sorted.
  std::vector<std::string> children(const std::string& group) const;

 private:
  void read_raw(const std::string& dataset, hid_t type, void* data, std::size_t n) const;
};

// A file built in memory and written once, atomically, by save(): the one way this project
// writes HDF5. HDF5 writes the file's structure and the datasets given to write()/write_array()
// into a sparse in-memory image through a driver of ours, and never touches the disk itself, so a
// full disk is one checked write of ours, not an HDF5 flush that fails half-way and leaves the
// library's state broken. The bulk of a large file goes into datasets only reserved here
// (reserve_array()), whose bytes save() copies from the caller's buffers straight into the file
// at their offsets: memory stays bounded for files of any size. Every object starts at a multiple
// of 8 bytes, so readers that map a file (the shard reader) see each contiguous array aligned for
// its type.
class Hdf5Writer : public Hdf5File {
 public:
  // `path`: the file's name in errors; save() says where it goes.
  explicit Hdf5Writer(const std::string& path);

  // Creates every missing group on a "/a/b/c" path.
  void create_group(const std::string& group);
  // A 1-D dataset. `chunk` > 0 stores the data in chunks of that many elements, compressed with
  // deflate at `deflate_level` (0: chunked, uncompressed). Readers need no settings for either.
  template <typename T>
  void write(const std::string& dataset, const std::vector<T>& data, std::size_t chunk = 0,
             int deflate_level = 4);
  // An N-dimensional array (row-major), for parameters and optimizer state.
  template <typename T>
  void write_array(const std::string& dataset, const T* data,
                   const std::vector<std::int64_t>& shape);
  // An N-dimensional dataset of T whose bytes save() takes from its `fill`: contiguous, given its
  // place in the file now, never written by HDF5. Attributes may be set on it.
  template <typename T>
  void reserve_array(const std::string& dataset, const std::vector<std::int64_t>& shape);
  void set_attribute(const std::string& object, const std::string& name, const std::string& value);
  void set_attribute(const std::string& object, const std::string& name, std::int64_t value);
  void set_attribute(const std::string& object, const std::string& name, double value);

  // Receives a reserved dataset's bytes, in order, in one piece or several.
  using ByteSink = std::function<void(const void* data, std::size_t bytes)>;
  // Hands reserved dataset `index` (in the order reserved) to `write`, all of its bytes.
  using ReservedFill = std::function<void(std::size_t index, const ByteSink& write)>;
  // Closes the HDF5 file (no call that changes it after this) and writes it to `path`
  // atomically: refuses, as "No space left on device", a file larger than the free space of the
  // target's file system, then writes a temporary name beside `path` (space reserved with
  // fallocate where the file system can, every write checked), the image HDF5 wrote, each
  // reserved dataset's bytes as `fill` hands them, fsync, rename, fsync of the directory. On any
  // failure (an error of ours naming the file and the cause, or an exception from `fill`) the
  // temporary is removed and an earlier file at `path` is untouched. Memory: the image and what
  // `fill` holds. A file without reserved datasets needs no `fill`.
  void save(const std::string& path, const ReservedFill& fill = {});

 private:
  void write_raw(const std::string& dataset, hid_t type, const void* data, std::size_t n,
                 std::size_t chunk, int deflate_level);
  void write_nd(const std::string& dataset, hid_t type, const void* data,
                const std::vector<std::int64_t>& shape);
  void reserve_nd(const std::string& dataset, hid_t type, const std::vector<std::int64_t>& shape);
  Hdf5Handle create_nd(const std::string& dataset, hid_t type,
                       const std::vector<std::int64_t>& shape, hid_t props);
  void write_attribute(const std::string& object, const std::string& name, hid_t type,
                       const void* value);
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
void Hdf5Writer::write(const std::string& dataset, const std::vector<T>& data, std::size_t chunk,
                       int deflate_level) {
  write_raw(dataset, hdf5_native_type<T>(), data.data(), data.size(), chunk, deflate_level);
}

template <typename T>
void Hdf5Writer::write_array(const std::string& dataset, const T* data,
                             const std::vector<std::int64_t>& shape) {
  write_nd(dataset, hdf5_native_type<T>(), data, shape);
}

template <typename T>
void Hdf5Writer::reserve_array(const std::string& dataset, const std::vector<std::int64_t>& shape) {
  reserve_nd(dataset, hdf5_native_type<T>(), shape);
}

template <typename T>
void Hdf5Reader::read_array(const std::string& dataset, T* out, std::size_t count) const {
  read_raw(dataset, hdf5_native_type<T>(), out, count);
}

template <typename T>
std::vector<T> Hdf5Reader::read(const std::string& dataset) const {
  std::vector<T> data(length(dataset));
  read_raw(dataset, hdf5_native_type<T>(), data.data(), data.size());
  return data;
}

}  // namespace nmt
