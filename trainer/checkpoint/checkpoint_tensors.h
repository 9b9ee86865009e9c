#pragma once
// A checkpoint's tensors as stored (the format: checkpoint.h): float32, row-major, with the CRC-32
// of their bytes; refused when non-finite, written in memory bounded by one tensor and read one
// tensor at a time. The generators' states likewise, as uint8. Used by checkpoint.cpp only.

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "common/hdf5_file.h"

namespace nmt::checkpoint {

// The tensors of one checkpoint. Each is checked and checksummed as it is added, its dataset only
// reserved in the file; write() then copies their bytes into the file one tensor at a time, from
// the tensors' own memory when they are float32 on the host.
class TensorWriter {
 public:
  explicit TensorWriter(Hdf5Writer& h5) : h5_(h5) {}
  // Refuses, naming the tensor, one that holds a NaN or an infinity.
  void add(const std::string& name, const at::Tensor& tensor);
  // Saves the file to `path` (Hdf5Writer::save: atomically), every tensor's bytes in turn.
  void write(const std::string& path);

 private:
  Hdf5Writer& h5_;
  std::vector<at::Tensor> tensors_;  // in the order their datasets were reserved
};

// A stored tensor of `like`'s shape, verified, as float32 in host memory: one tensor's worth of
// memory, read straight into by HDF5. `checked`: the file carries checksums (format 2 and later).
at::Tensor read_stored(const Hdf5Reader& h5, const std::string& name, const at::Tensor& like,
                       bool checked);
// read_stored, then on `like`'s device and of its dtype.
at::Tensor read_tensor(const Hdf5Reader& h5, const std::string& name, const at::Tensor& like,
                       bool checked);

void write_rng(Hdf5Writer& h5, const std::string& name, at::Generator generator);
void read_rng(const Hdf5Reader& h5, const std::string& name, at::Generator generator, bool checked);

}  // namespace nmt::checkpoint
