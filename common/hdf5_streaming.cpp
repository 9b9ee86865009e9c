#include "common/hdf5_streaming.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <iterator>
#include <limits>

#include "common/atomic_file.h"
#include "common/checked_paths.h"

#if __has_include(<H5FDdevelop.h>)
#include <H5FDdevelop.h>  // the driver interface, outside hdf5.h from HDF5 1.13 on
#endif

namespace nmt {
namespace {

namespace fs = std::filesystem;

// The virtual file driver of Mode::kStreaming: a file that lives in a Hdf5StreamingImage. HDF5
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

[[noreturn]] void fail_errno(const std::string& path, const std::string& what) {
  throw Hdf5Error(path + ": " + what + ": " + std::strerror(errno));
}

// The temporary file a kStreaming save writes: every write checked; closed and removed unless
// renamed into place.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) fail_errno(path_, "cannot create");
  }
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!renamed_) ::unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  // Allocates the file's blocks now, so that a full disk shows before anything is written; file
  // systems without fallocate get their blocks as the writes come.
  void reserve(std::uint64_t size) {
    int rc = 0;
    do {
      rc = ::fallocate(fd_, 0, 0, static_cast<off_t>(size));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0 && errno != EOPNOTSUPP && errno != ENOSYS) {
      fail_errno(path_, fmt::format("cannot reserve {} bytes", size));
    }
  }
  void write_at(const void* data, std::size_t size, std::uint64_t offset) {
    const auto* bytes = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::pwrite(fd_, bytes, size, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail_errno(path_, "write failed");
      bytes += n;
      offset += static_cast<std::uint64_t>(n);
      size -= static_cast<std::size_t>(n);
    }
  }
  // Sets the size, fsyncs, closes and renames over `target`, then fsyncs the directory.
  void finish_as(const std::string& target, std::uint64_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) fail_errno(path_, "cannot set the size");
    if (::fsync(fd_) != 0) fail_errno(path_, "fsync failed");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail_errno(path_, "close failed");
    if (::rename(path_.c_str(), target.c_str()) != 0) fail_errno(target, "rename failed");
    renamed_ = true;
    const fs::path parent = fs::path(target).parent_path();
    fsync_path(parent.empty() ? std::string(".") : parent.string());
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool renamed_ = false;
};

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
                    const Hdf5File::ReservedFill& fill) {
  const std::string path = output_file_path(given);
  check_free_space(path, image.eof);
  TemporaryFile out(path + ".tmp." + std::to_string(::getpid()));
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
    const Hdf5File::ByteSink sink = [&](const void* data, std::size_t bytes) {
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
  out.finish_as(path, image.eof);
}

}  // namespace nmt
