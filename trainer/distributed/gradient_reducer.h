#pragma once
// Sums gradients over the data-parallel ranks in fused buckets (one all-reduce per bucket of
// about bucket_mb, not one per tensor). The trainer then divides by the update's target tokens
// summed over ranks, so the update equals the single-process update on the union of the ranks'
// batches.
//
// With overlap, a hook on every parameter copies its gradient into the bucket as the backward pass
// produces it, and a full bucket starts its all-reduce while the backward pass goes on (buckets
// are filled in reverse parameter order, roughly the order gradients appear). Buckets start in
// index order on every rank, which keeps the collectives in the same order everywhere.
// Gradient accumulation composes: hooks act only in the update's last backward (arm()), and a
// hook adds the gradient already accumulated in .grad from the earlier batches.
//
// Staging: CPU tensors reduce in place in a CPU bucket. CUDA tensors reduce in a device bucket
// with NCCL or when the MPI library is CUDA-aware, otherwise in a host bucket (copied across).
// Reduced types: float32 and float64 as they are; half-precision gradients go through float32.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "trainer/distributed/communicator.h"
#include "trainer/distributed/device_collective.h"

namespace nmt::distributed {

struct ReducerOptions {
  double bucket_mb = 25.0;
  bool overlap = true;
  bool device_buffers = false;  // CUDA tensors: reduce device memory directly (CUDA-aware MPI)
  DeviceCollective* device_collective = nullptr;  // CUDA tensors: reduce with this (NCCL) instead
};

class GradientReducer {
 public:
  GradientReducer(std::vector<at::Tensor> parameters, const Communicator& comm,
                  ReducerOptions options);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Call before the backward pass of the update's last batch: its hooks will start reductions.
  void arm();
  // After that backward pass: reduces whatever has not started, waits for all of it, and leaves
  // in every parameter's .grad the sum over ranks of the local .grad.
  void finish();

  std::size_t bucket_count() const;
  // Buckets whose all-reduce the last update started from a hook, during the backward pass.
  std::size_t overlapped_buckets() const;
  std::vector<std::int64_t> bucket_elements() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt::distributed
