#include "trainer/checkpoint/checkpoint_tensors.h"

#include <ATen/ops/empty.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

namespace nmt::checkpoint {
namespace {

std::vector<std::int64_t> shape_of(const at::Tensor& t) {
  return t.sizes().vec();
}

// CRC-32 of a tensor's bytes (a CPU tensor, contiguous, as stored): catches a flipped bit, not an
// adversary, at a few GB/s.
std::int64_t crc32_of(const at::Tensor& cpu) {
  const auto* bytes = static_cast<const Bytef*>(cpu.data_ptr());
  const auto size = static_cast<z_size_t>(cpu.numel()) * cpu.element_size();
  return static_cast<std::int64_t>(crc32_z(crc32_z(0L, Z_NULL, 0), bytes, size));
}

// NaNs and infinities in a float32 host tensor as stored, counted in place: at::isfinite would
// allocate temporaries of nearly twice the tensor's size.
std::int64_t count_non_finite(const at::Tensor& cpu) {
  const float* values = cpu.data_ptr<float>();
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < cpu.numel(); ++i) {
    bad += !(std::fabs(values[i]) <= std::numeric_limits<float>::max());  // NaN compares false
  }
  return bad;
}

// A tensor as stored: float32, row-major, in host memory (the tensor itself when it already is).
at::Tensor stored_form(const at::Tensor& tensor) {
  return tensor.detach().to(at::kCPU, at::kFloat).contiguous();
}

// Format 2 files carry a checksum per tensor; `checked` is false for format 1.
void verify_checksum(const Hdf5Reader& h5, const std::string& name, const at::Tensor& cpu,
                     bool checked) {
  if (!checked) return;
  const std::int64_t stored = h5.int_attribute(name, "crc32");
  const std::int64_t actual = crc32_of(cpu);
  if (stored != actual) {
    throw std::runtime_error(fmt::format(
        "{}: '{}' fails its checksum (stored crc32 {:08x}, read {:08x}): the file is corrupt; "
        "use an earlier checkpoint",
        h5.path(), name, stored, actual));
  }
}

}  // namespace

void TensorWriter::add(const std::string& name, const at::Tensor& tensor) {
  const auto cpu = stored_form(tensor);
  if (const auto bad = count_non_finite(cpu); bad > 0) {
    throw std::runtime_error(fmt::format(
        "'{}' holds {} non-finite values (NaN or Inf): refusing to save it", name, bad));
  }
  h5_.reserve_array<float>(name, shape_of(cpu));
  h5_.set_attribute(name, "crc32", crc32_of(cpu));
  tensors_.push_back(tensor);
}

void TensorWriter::write(const std::string& path) {
  h5_.save(path, [this](std::size_t index, const Hdf5Writer::ByteSink& sink) {
    const auto cpu = stored_form(tensors_[index]);
    sink(cpu.data_ptr(), static_cast<std::size_t>(cpu.numel()) * cpu.element_size());
  });
}

at::Tensor read_stored(const Hdf5Reader& h5, const std::string& name, const at::Tensor& like,
                       bool checked) {
  const auto stored = h5.shape(name);
  if (stored != shape_of(like)) {
    throw std::runtime_error(fmt::format("{}: '{}' has shape [{}] but the model has [{}]",
                                         h5.path(), name, fmt::join(stored, ", "),
                                         fmt::join(like.sizes(), ", ")));
  }
  auto cpu = at::empty(like.sizes(), at::TensorOptions().dtype(at::kFloat));
  h5.read_array(name, cpu.data_ptr<float>(), static_cast<std::size_t>(cpu.numel()));
  verify_checksum(h5, name, cpu, checked);
  if (const auto bad = count_non_finite(cpu); bad > 0) {
    throw std::runtime_error(
        fmt::format("{}: '{}' holds {} non-finite values (NaN or Inf): refusing to load it",
                    h5.path(), name, bad));
  }
  return cpu;
}

at::Tensor read_tensor(const Hdf5Reader& h5, const std::string& name, const at::Tensor& like,
                       bool checked) {
  return read_stored(h5, name, like, checked).to(like.device(), like.scalar_type());
}

void write_rng(Hdf5Writer& h5, const std::string& name, at::Generator generator) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  const auto state = generator.get_state().contiguous();  // uint8 bytes
  h5.write_array(name, state.data_ptr<std::uint8_t>(), shape_of(state));
  h5.set_attribute(name, "crc32", crc32_of(state));
}

void read_rng(const Hdf5Reader& h5, const std::string& name, at::Generator generator,
              bool checked) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  auto state = at::empty(h5.shape(name), at::TensorOptions().dtype(at::kByte));
  h5.read_array(name, state.data_ptr<std::uint8_t>(), static_cast<std::size_t>(state.numel()));
  verify_checksum(h5, name, state, checked);
  generator.set_state(state);
}

}  // namespace nmt::checkpoint
