// CTranslate2's model.bin writer (the layout: ct2_model_file.h).

#include "trainer/export/ct2_model_file.h"

#include <ATen/ops/scalar_tensor.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>

#include <unistd.h>

namespace nmt::exporting {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "model.bin is little-endian; this writer copies host integers as they are");

std::uint8_t dtype_id(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return 0;
    case at::kChar:
      return 1;
    case at::kShort:
      return 2;
    case at::kInt:
      return 3;
    default:
      return std::numeric_limits<std::uint8_t>::max();
  }
}

// Checked writes into one file; the destructor closes it (without the fsync of finish()).
class FileSink {
 public:
  explicit FileSink(std::string path) : path_(std::move(path)) {
    file_ = std::fopen(path_.c_str(), "wb");
    if (file_ == nullptr) fail("cannot create");
  }
  ~FileSink() {
    if (file_ != nullptr) std::fclose(file_);
  }
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  void bytes(const void* data, std::size_t size) {
    if (size > 0 && std::fwrite(data, 1, size, file_) != size) fail("cannot write");
  }
  template <typename T>
  void value(T v) {
    bytes(&v, sizeof(v));
  }
  void string(const std::string& s) {
    if (s.size() + 1 > std::numeric_limits<std::uint16_t>::max())
      throw std::invalid_argument(
          fmt::format("{}: name '{}...' is too long for model.bin", path_, s.substr(0, 40)));
    value(static_cast<std::uint16_t>(s.size() + 1));
    bytes(s.data(), s.size());
    value(std::uint8_t{0});
  }
  void finish() {
    if (std::fflush(file_) != 0 || ::fsync(fileno(file_)) != 0) fail("cannot flush");
    const auto closed = std::fclose(file_);
    file_ = nullptr;
    if (closed != 0) fail("cannot close");
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::runtime_error(fmt::format("{}: {} ({})", path_, what, std::strerror(errno)));
  }
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace

void Ct2ModelFile::add_tensor(const std::string& name, const at::Tensor& tensor) {
  if (dtype_id(tensor.scalar_type()) == std::numeric_limits<std::uint8_t>::max())
    throw std::invalid_argument(
        fmt::format("model.bin variable {}: dtype {} is not one of float32, "
                    "int8, int16, int32",
                    name, c10::toString(tensor.scalar_type())));
  if (tensor.nbytes() > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument(
        fmt::format("model.bin variable {}: {} bytes exceed the format's "
                    "4 GiB per variable",
                    name, tensor.nbytes()));
  if (has(name))
    throw std::invalid_argument(fmt::format("model.bin variable {} given twice", name));
  variables_.emplace(name, tensor.detach().to(at::kCPU).contiguous());
}

void Ct2ModelFile::add_int8(const std::string& name, std::int8_t value) {
  add_tensor(name, at::scalar_tensor(value, at::kChar));
}

void Ct2ModelFile::add_int16(const std::string& name, std::int16_t value) {
  add_tensor(name, at::scalar_tensor(value, at::kShort));
}

void Ct2ModelFile::add_int32(const std::string& name, std::int32_t value) {
  add_tensor(name, at::scalar_tensor(value, at::kInt));
}

void Ct2ModelFile::add_alias(const std::string& alias, const std::string& target) {
  if (variables_.count(target) == 0)
    throw std::invalid_argument(
        fmt::format("model.bin alias {} names {}, which is not a variable", alias, target));
  if (has(alias))
    throw std::invalid_argument(fmt::format("model.bin variable {} given twice", alias));
  aliases_.emplace(alias, target);
}

bool Ct2ModelFile::has(const std::string& name) const {
  return variables_.count(name) > 0 || aliases_.count(name) > 0;
}

void Ct2ModelFile::write(const std::string& path, const std::string& spec_name,
                         std::uint32_t revision) const {
  FileSink out(path);
  out.value(kCt2BinaryVersion);
  out.string(spec_name);
  out.value(revision);
  out.value(static_cast<std::uint32_t>(variables_.size()));
  for (const auto& [name, tensor] : variables_) {
    out.string(name);
    out.value(static_cast<std::uint8_t>(tensor.dim()));
    for (const auto d : tensor.sizes()) out.value(static_cast<std::uint32_t>(d));
    out.value(dtype_id(tensor.scalar_type()));
    out.value(static_cast<std::uint32_t>(tensor.nbytes()));
    out.bytes(tensor.data_ptr(), tensor.nbytes());
  }
  out.value(static_cast<std::uint32_t>(aliases_.size()));
  for (const auto& [alias, target] : aliases_) {
    out.string(alias);
    out.string(target);
  }
  out.finish();
}

}  // namespace nmt::exporting
