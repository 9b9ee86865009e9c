#pragma once
// CTranslate2's model.bin (binary version 6, the layout its Python converters write and
// src/models/model.cc reads), all little-endian:
//   u32 binary version, string spec name, u32 spec revision,
//   u32 variable count, then per variable (sorted by name): string name, u8 rank, u32 dims[rank],
//   u8 dtype (0 float32, 1 int8, 2 int16, 3 int32), u32 payload bytes, the payload (row-major);
//   u32 alias count, then per alias: string alias, string the variable it names.
// A string is a u16 length (its bytes plus a terminating NUL), the bytes and the NUL. Scalars
// (flags, head counts) are rank-0 variables.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>

namespace nmt::exporting {

inline constexpr std::uint32_t kCt2BinaryVersion = 6;

class Ct2ModelFile {
 public:
  // A float32, int8, int16 or int32 tensor of any shape, kept contiguous on the CPU. Throws
  // std::invalid_argument naming `name` for another dtype, a name given twice, or a payload
  // larger than the format's 32-bit size field.
  void add_tensor(const std::string& name, const at::Tensor& tensor);
  void add_int8(const std::string& name, std::int8_t value);
  void add_int16(const std::string& name, std::int16_t value);
  void add_int32(const std::string& name, std::int32_t value);
  // `alias` resolves to the variable `target` (a shared matrix is stored once).
  void add_alias(const std::string& alias, const std::string& target);

  bool has(const std::string& name) const;
  std::size_t size() const { return variables_.size(); }
  // Writes the file for the model spec `spec_name` (e.g. "TransformerSpec") at `revision` to
  // `path`, with checked writes and an fsync; memory holds no second copy of the tensors. Throws
  // std::runtime_error naming `path` on failure.
  void write(const std::string& path, const std::string& spec_name, std::uint32_t revision) const;

 private:
  std::map<std::string, at::Tensor> variables_;  // sorted by name, as the converters write them
  std::map<std::string, std::string> aliases_;
};

}  // namespace nmt::exporting
