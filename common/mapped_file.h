#pragma once
// A read-only memory map of a whole file. Pages are read from the page cache as they are touched
// and shared by every process mapping the same file (the ranks of one node share one copy).
// release() drops this process's pages (the page cache keeps them), so the resident memory of a
// reader that touches a large file piece by piece stays that of the pieces it touched since.

#include <cstddef>
#include <cstdint>
#include <string>

namespace nmt {

class MappedFile {
 public:
  // Throws std::runtime_error naming the file and the cause.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  std::size_t size() const { return size_; }
  const std::uint8_t* data() const { return data_; }
  void release() const;

 private:
  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace nmt
