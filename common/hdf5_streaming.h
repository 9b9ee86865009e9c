#pragma once
// Hdf5Writer's machinery (common/hdf5_file.h): the image in memory that HDF5 writes a file's
// structure into, through a virtual file driver of ours, and the checked writer that puts the
// image and the reserved datasets' bytes on disk. Only hdf5_file.cpp uses it.

#include <hdf5.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/hdf5_file.h"

namespace nmt {

struct Hdf5StreamingImage {
  static constexpr std::uint64_t kPage = 4096;
  struct Reserved {
    std::string name;
    std::uint64_t offset = 0, bytes = 0;
  };
  std::map<std::uint64_t, std::vector<unsigned char>> pages;  // by page index, kPage bytes each
  std::uint64_t eof = 0;
  std::vector<Reserved> reserved;

  void write(std::uint64_t addr, std::size_t size, const unsigned char* from) {
    eof = std::max<std::uint64_t>(eof, addr + size);
    while (size > 0) {
      const std::uint64_t in_page = addr % kPage;
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(size, kPage - in_page));
      auto& page = pages[addr / kPage];
      if (page.empty()) page.resize(kPage);
      std::memcpy(page.data() + in_page, from, n);
      addr += n;
      from += n;
      size -= n;
    }
  }
  // What was never written reads as zeros, as a file's holes do.
  void read(std::uint64_t addr, std::size_t size, unsigned char* to) const {
    while (size > 0) {
      const std::uint64_t in_page = addr % kPage;
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(size, kPage - in_page));
      const auto page = pages.find(addr / kPage);
      if (page == pages.end()) {
        std::memset(to, 0, n);
      } else {
        std::memcpy(to, page->second.data() + in_page, n);
      }
      addr += n;
      to += n;
      size -= n;
    }
  }
};

// The driver's file-access information: the image a file lives in.
struct StreamingDriverInfo {
  Hdf5StreamingImage* image;
};

// The driver's id, registered with HDF5 on first use (negative if HDF5 refused it).
hid_t hdf5_streaming_driver();

// Writes `image` to `path` through a temporary file: free space checked, the size reserved, every
// write checked, the reserved datasets' bytes taken from `fill`, fsync, rename, the directory
// fsynced. On failure the temporary is removed and Hdf5Error names the file and the cause.
void write_streamed(const std::string& path, const Hdf5StreamingImage& image,
                    const Hdf5Writer::ReservedFill& fill);

}  // namespace nmt
