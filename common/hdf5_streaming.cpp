#include "common/hdf5_streaming.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <limits>

#include "common/atomic_file.h"

#if __has_include(<H5FDdevelop.h>)
#include <H5FDdevelop.h>  // the driver interface, outside hdf5.h from HDF5 1.13 on
#endif

namespace nmt {
namespace {

namespace fs = std::filesystem;

// The virtual file driver of Hdf5Writer: a file that lives in a Hdf5StreamingImage. HDF5
// never reaches the disk through it, so no disk error can leave the library's state broken.
struct StreamingFile {
  H5FD_t pub;  // first: HDF5 hands back pointers to it
  Hdf5StreamingImage* image;
  haddr_t eoa;
};

StreamingFile* streaming_file(H5FD_t* file) {
  return reinterpret_cast<StreamingFile*>(file);
}
const StreamingFile* streaming_file(const H5FD_t* file) {
  return reinterpret_cast<const StreamingFile*>(file);
}

H5FD_t* streaming_open(const char*, unsigned, hid_t fapl, haddr_t) {
  const auto* info = static_cast<const StreamingDriverInfo*>(H5Pget_driver_info(fapl));
  if (info == nullptr || info->image == nullptr) return nullptr;
  auto* file = new (std::nothrow) StreamingFile{};
  if (file == nullptr) return nullptr;
  file->image = info->image;
  file->image->pages.clear();  // every open starts an empty file (H5Fcreate truncates)
  file->image->eof = 0;
  return &file->pub;
}

herr_t streaming_close(H5FD_t* file) {
  delete streaming_file(file);
  return 0;
}

herr_t streaming_query(const H5FD_t*, unsigned long* flags) {
  // As the sec2 and core drivers: metadata and small raw data aggregated, metadata accumulated.
  *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
           H5FD_FEAT_AGGREGATE_SMALLDATA;
  return 0;
}

haddr_t streaming_get_eoa(const H5FD_t* file, H5FD_mem_t) {
  return streaming_file(file)->eoa;
}

herr_t streaming_set_eoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  streaming_file(file)->eoa = addr;
  return 0;
}

haddr_t streaming_get_eof(const H5FD_t* file, H5FD_mem_t) {
  return streaming_file(file)->image->eof;
}

herr_t streaming_read(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, size_t size, void* buffer) {
  streaming_file(file)->image->read(addr, size, static_cast<unsigned char*>(buffer));
  return 0;
}

herr_t streaming_write(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, size_t size,
                       const void* buffer) {
  try {
    streaming_file(file)->image->write(addr, size, static_cast<const unsigned char*>(buffer));
    return 0;
  } catch (...) {  // out of memory: an HDF5 error, never an exception through C
    return -1;
  }
}

herr_t streaming_truncate(H5FD_t* file, hid_t, hbool_t) {
  streaming_file(file)->image->eof = streaming_file(file)->eoa;
  return 0;
}

}  // namespace

hid_t hdf5_streaming_driver() {
  static const hid_t id = [] {
    H5FD_class_t driver{};
#ifdef H5FD_CLASS_VERSION
    driver.version = H5FD_CLASS_VERSION;
    driver.value = static_cast<H5FD_class_value_t>(0x4e4d);  // beyond HDF5's reserved values
#endif
    driver.name = "nmt_streaming_image";
    driver.maxaddr = static_cast<haddr_t>(std::numeric_limits<std::int64_t>::max());
    driver.fc_degree = H5F_CLOSE_WEAK;
    driver.fapl_size = sizeof(StreamingDriverInfo);
    driver.open = streaming_open;
    driver.close = streaming_close;
    driver.query = streaming_query;
    driver.get_eoa = streaming_get_eoa;
    driver.set_eoa = streaming_set_eoa;
    driver.get_eof = streaming_get_eof;
    driver.read = streaming_read;
    driver.write = streaming_write;
    driver.truncate = streaming_truncate;
    const H5FD_mem_t free_list_map[] = H5FD_FLMAP_DICHOTOMY;
    std::copy(std::begin(free_list_map), std::end(free_list_map), driver.fl_map);
    return H5FDregister(&driver);
  }();
  return id;
}

namespace {

// A file larger than the free space is refused before anything is written.
void check_free_space(const std::string& path, std::uint64_t size) {
  const fs::path parent = fs::path(path).parent_path();
  struct statvfs info {};
  if (::statvfs(parent.empty() ? "." : parent.c_str(), &info) != 0) return;  // the writes will say
  const std::uint64_t available = static_cast<std::uint64_t>(info.f_bavail) * info.f_frsize;
  if (size > available) {
    throw Hdf5Error(fmt::format(
        "{}: No space left on device: the file takes {} bytes, its file system has {} free", path,
        size, available));
  }
}

}  // namespace

void write_streamed(const std::string& given, const Hdf5StreamingImage& image,
                    const Hdf5Writer::ReservedFill& fill) {
  AtomicFileWriter out(given);
  const std::string& path = out.target();
  check_free_space(path, image.eof);
  out.reserve(image.eof);
  for (const auto& [index, page] : image.pages) {
    const std::uint64_t offset = index * Hdf5StreamingImage::kPage;
    if (offset >= image.eof) break;
    out.write_at(page.data(), std::min<std::uint64_t>(page.size(), image.eof - offset), offset);
  }
  // After the pages: a page HDF5 wrote may share its bytes with a reserved dataset's first ones.
  for (std::size_t i = 0; i < image.reserved.size(); ++i) {
    const auto& r = image.reserved[i];
    std::uint64_t written = 0;
    const Hdf5Writer::ByteSink sink = [&](const void* data, std::size_t bytes) {
      if (written + bytes > r.bytes) {
        throw Hdf5Error(fmt::format("{}: '{}' takes {} bytes, {} were handed to it", path, r.name,
                                    r.bytes, written + bytes));
      }
      out.write_at(data, bytes, r.offset + written);
      written += bytes;
    };
    if (r.bytes > 0) {
      if (!fill) throw Hdf5Error(fmt::format("{}: nothing fills '{}'", path, r.name));
      fill(i, sink);
    }
    if (written != r.bytes) {
      throw Hdf5Error(fmt::format("{}: '{}' takes {} bytes, only {} were handed to it", path,
                                  r.name, r.bytes, written));
    }
  }
  out.commit(image.eof);
}

}  // namespace nmt
