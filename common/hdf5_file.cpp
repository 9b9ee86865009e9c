#include "common/hdf5_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/hdf5_streaming.h"

namespace nmt {

namespace {

// HDF5 prints its own error stack to stderr by default; we report errors ourselves, once, with
// the file and object named.
void silence_hdf5_errors() {
  static const bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
}

}  // namespace

hid_t hdf5_integer_type(std::size_t bytes, bool is_signed) {
  switch (bytes) {
    case 1:
      return is_signed ? H5T_NATIVE_INT8 : H5T_NATIVE_UINT8;
    case 2:
      return is_signed ? H5T_NATIVE_INT16 : H5T_NATIVE_UINT16;
    case 4:
      return is_signed ? H5T_NATIVE_INT32 : H5T_NATIVE_UINT32;
    case 8:
      return is_signed ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64;
    default:
      throw Hdf5Error(fmt::format("no HDF5 native integer type of {} bytes", bytes));
  }
}

hid_t hdf5_float_type(std::size_t bytes) {
  if (bytes == sizeof(float)) return H5T_NATIVE_FLOAT;
  if (bytes == sizeof(double)) return H5T_NATIVE_DOUBLE;
  throw Hdf5Error(fmt::format("no HDF5 native floating-point type of {} bytes", bytes));
}

Hdf5Handle& Hdf5Handle::operator=(Hdf5Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    closer_ = other.closer_;
    other.id_ = -1;
  }
  return *this;
}

void Hdf5Handle::reset() {
  if (id_ >= 0 && closer_ != nullptr) closer_(id_);
  id_ = -1;
}

hid_t Hdf5Handle::release() {
  const hid_t id = id_;
  id_ = -1;
  return id;
}

Hdf5File::Hdf5File(std::string path) : path_(std::move(path)) {
  silence_hdf5_errors();
}

// file_ closes before image_ goes: members are destroyed in reverse order.
Hdf5File::~Hdf5File() = default;

Hdf5File::Hdf5File(Hdf5File&& other) noexcept = default;

Hdf5File& Hdf5File::operator=(Hdf5File&& other) noexcept {
  if (this != &other) {
    file_.reset();  // while its image is still there
    image_ = std::move(other.image_);
    file_ = std::move(other.file_);
    path_ = std::move(other.path_);
  }
  return *this;
}

Hdf5Reader::Hdf5Reader(const std::string& path) : Hdf5File(path) {
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) fail("cannot open as HDF5 (missing, unreadable, truncated or not HDF5)");
  file_ = Hdf5Handle(id, H5Fclose);
}

Hdf5Writer::Hdf5Writer(const std::string& path) : Hdf5File(path) {
  image_ = std::make_unique<Hdf5StreamingImage>();
  Hdf5Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  const StreamingDriverInfo info{image_.get()};
  const hid_t driver = hdf5_streaming_driver();
  hid_t id = -1;
  // Strong: save()'s H5Fclose closes the file for good, its last bytes in the image.
  if (driver >= 0 && H5Pset_driver(access.get(), driver, &info) >= 0 &&
      H5Pset_fclose_degree(access.get(), H5F_CLOSE_STRONG) >= 0 &&
      H5Pset_alignment(access.get(), 1, 8) >= 0) {
    id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
  }
  if (id < 0) fail("cannot create the file in memory");
  file_ = Hdf5Handle(id, H5Fclose);
}

void Hdf5Writer::save(const std::string& path, const ReservedFill& fill) {
  if (file_.get() < 0) fail("already saved");
  if (H5Fclose(file_.release()) < 0) fail("cannot finish the file's structure in memory");
  write_streamed(path, *image_, fill);
}

void Hdf5File::fail(const std::string& what) const {
  throw Hdf5Error(path_ + ": " + what);
}

void Hdf5Writer::create_group(const std::string& group) {
  std::string prefix;
  std::size_t start = 1;
  while (start <= group.size()) {
    const auto slash = group.find('/', start);
    prefix = group.substr(0, slash);
    if (!prefix.empty() && prefix != "/" && !exists(prefix)) {
      Hdf5Handle props(H5Pcreate(H5P_GROUP_CREATE), H5Pclose);
      H5Pset_obj_track_times(props.get(), false);
      const hid_t g =
          H5Gcreate2(file_.get(), prefix.c_str(), H5P_DEFAULT, props.get(), H5P_DEFAULT);
      if (g < 0) fail(fmt::format("cannot create group '{}'", prefix));
      H5Gclose(g);
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
}

bool Hdf5File::exists(const std::string& object) const {
  if (object == "/") return true;
  // H5Lexists requires every intermediate group to exist, so check the path one level at a time.
  std::size_t start = 1;
  while (true) {
    const auto slash = object.find('/', start);
    const std::string prefix = object.substr(0, slash);
    if (H5Lexists(file_.get(), prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

Hdf5Handle Hdf5File::open_object(const std::string& object) const {
  if (!exists(object)) fail(fmt::format("no object '{}'", object));
  const hid_t id = H5Oopen(file_.get(), object.c_str(), H5P_DEFAULT);
  if (id < 0) fail(fmt::format("cannot open object '{}'", object));
  return Hdf5Handle(id, H5Oclose);
}

void Hdf5Writer::write_raw(const std::string& dataset, hid_t type, const void* data, std::size_t n,
                           std::size_t chunk, int deflate_level) {
  const auto slash = dataset.rfind('/');
  if (slash != std::string::npos && slash > 0) create_group(dataset.substr(0, slash));
  const hsize_t dims[1] = {static_cast<hsize_t>(n)};
  Hdf5Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose);
  Hdf5Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  // No modification times in object headers: the same data must give the same file bytes.
  H5Pset_obj_track_times(props.get(), false);
  if (chunk > 0 && n > 0) {
    const hsize_t chunk_dims[1] = {static_cast<hsize_t>(std::min(chunk, n))};
    H5Pset_chunk(props.get(), 1, chunk_dims);
    if (deflate_level > 0) H5Pset_deflate(props.get(), static_cast<unsigned>(deflate_level));
  }
  Hdf5Handle set(H5Dcreate2(file_.get(), dataset.c_str(), type, space.get(), H5P_DEFAULT,
                            props.get(), H5P_DEFAULT),
                 H5Dclose);
  if (set.get() < 0) fail(fmt::format("cannot create dataset '{}'", dataset));
  if (n > 0 && H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    fail(fmt::format("cannot write dataset '{}' ({} elements; disk full?)", dataset, n));
  }
}

Hdf5Handle Hdf5Writer::create_nd(const std::string& dataset, hid_t type,
                                 const std::vector<std::int64_t>& shape, hid_t props) {
  const auto slash = dataset.rfind('/');
  if (slash != std::string::npos && slash > 0) create_group(dataset.substr(0, slash));
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Hdf5Handle space(dims.empty()
                       ? H5Screate(H5S_SCALAR)
                       : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                   H5Sclose);
  // No modification times in object headers: the same data must give the same file bytes.
  H5Pset_obj_track_times(props, false);
  Hdf5Handle set(
      H5Dcreate2(file_.get(), dataset.c_str(), type, space.get(), H5P_DEFAULT, props, H5P_DEFAULT),
      H5Dclose);
  if (set.get() < 0) fail(fmt::format("cannot create dataset '{}'", dataset));
  return set;
}

void Hdf5Writer::write_nd(const std::string& dataset, hid_t type, const void* data,
                          const std::vector<std::int64_t>& shape) {
  Hdf5Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  Hdf5Handle set = create_nd(dataset, type, shape, props.get());
  if (H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    fail(fmt::format("cannot write dataset '{}' (disk full?)", dataset));
  }
}

void Hdf5Writer::reserve_nd(const std::string& dataset, hid_t type,
                            const std::vector<std::int64_t>& shape) {
  // Contiguous, placed now, never filled: HDF5 writes none of its bytes, save() writes them all.
  Hdf5Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_layout(props.get(), H5D_CONTIGUOUS);
  H5Pset_alloc_time(props.get(), H5D_ALLOC_TIME_EARLY);
  H5Pset_fill_time(props.get(), H5D_FILL_TIME_NEVER);
  Hdf5Handle set = create_nd(dataset, type, shape, props.get());
  Hdf5Handle space(H5Dget_space(set.get()), H5Sclose);
  const auto bytes =
      static_cast<std::uint64_t>(H5Sget_simple_extent_npoints(space.get())) * H5Tget_size(type);
  if (H5Dget_storage_size(set.get()) != bytes) {
    fail(fmt::format("'{}' was given {} bytes in the file, not {}", dataset,
                     H5Dget_storage_size(set.get()), bytes));
  }
  haddr_t offset = 0;
  if (bytes > 0 && (offset = H5Dget_offset(set.get())) == HADDR_UNDEF) {
    fail(fmt::format("'{}' has no place in the file", dataset));
  }
  image_->reserved.push_back({dataset, offset, bytes});
}

std::vector<std::int64_t> Hdf5Reader::shape(const std::string& dataset) const {
  Hdf5Handle set = open_object(dataset);
  Hdf5Handle space(H5Dget_space(set.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail(fmt::format("cannot read the shape of '{}'", dataset));
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return {dims.begin(), dims.end()};
}

std::vector<std::string> Hdf5Reader::children(const std::string& group) const {
  Hdf5Handle g = open_object(group);
  H5G_info_t info;
  if (H5Gget_info(g.get(), &info) < 0) fail(fmt::format("'{}' is not a group", group));
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t size =
        H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    std::string name(static_cast<std::size_t>(size), '\0');
    H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size() + 1,
                       H5P_DEFAULT);
    names.push_back(name);
  }
  return names;
}

std::size_t Hdf5Reader::length(const std::string& dataset) const {
  Hdf5Handle set = open_object(dataset);
  Hdf5Handle space(H5Dget_space(set.get()), H5Sclose);
  if (H5Sget_simple_extent_ndims(space.get()) != 1) {
    fail(fmt::format("dataset '{}' is not one-dimensional", dataset));
  }
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  return static_cast<std::size_t>(dims[0]);
}

void Hdf5Reader::read_raw(const std::string& dataset, hid_t type, void* data, std::size_t n) const {
  Hdf5Handle set = open_object(dataset);
  Hdf5Handle stored(H5Dget_type(set.get()), H5Tclose);
  if (H5Tget_class(stored.get()) != H5Tget_class(type)) {
    fail(fmt::format("dataset '{}' has a different element type than expected", dataset));
  }
  Hdf5Handle space(H5Dget_space(set.get()), H5Sclose);
  const auto stored_count = H5Sget_simple_extent_npoints(space.get());
  if (stored_count < 0 || static_cast<std::size_t>(stored_count) != n) {
    fail(fmt::format("dataset '{}' has {} elements, expected {}", dataset, stored_count, n));
  }
  if (n > 0 && H5Dread(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    fail(fmt::format("cannot read dataset '{}' (file truncated or corrupt?)", dataset));
  }
}

}  // namespace nmt
