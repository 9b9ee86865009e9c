#pragma once
// A small RAII layer over the HDF5 C API, shared by the shard format (preprocess/) and the
// checkpoint format (trainer/). It speaks in whole 1-D datasets and scalar attributes, which is all
// those formats need, and every error names the file and the object.

#include <hdf5.h>

#include <cstdint>
#include <stdexcept>
#include <string>
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

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

class Hdf5File {
 public:
  // kCreate truncates an existing file. kInMemory builds the file in memory (`path` is only its
  // name in errors) for save(): HDF5 then never writes to disk itself, so a full disk is one
  // checked write() of ours, not an HDF5 flush that fails half-way and leaves the library's state
  // broken (a crash at the next file operation or at exit).
  enum class Mode { kRead, kCreate, kInMemory };

  Hdf5File(const std::string& path, Mode mode);
  const std::string& path() const { return path_; }
  // kInMemory: writes the finished file to `path` with write_file_atomically (a temporary name,
  // every write checked, fsync, rename; on failure the temporary is removed and the error names
  // the file and the cause, e.g. "No space left on device"). Takes a copy of the image: the peak
  // memory is twice the file's size.
  void save(const std::string& path);

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
  void read_raw(const std::string& dataset, hid_t type, void* data, std::size_t n) const;
  void write_attribute(const std::string& object, const std::string& name, hid_t type,
                       const void* value);
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  Hdf5Handle file_;
};

// The HDF5 native type of T (int8/32/64, uint8/32/64, float, double).
template <typename T>
hid_t hdf5_native_type();

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
