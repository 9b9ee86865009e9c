#pragma once
// LibTorch's CUDA half (libtorch_cuda.so, with cuBLAS, cuDNN, NCCL...) is ~230 MB of resident
// memory once loaded, and a tool that decodes on the CPU needs none of it. The decoding and
// evaluation tools are therefore linked against LibTorch's CPU half only, and load the CUDA half
// when a device is selected on a machine that has an NVIDIA driver: loading it registers LibTorch's
// CUDA backend, after which torch::cuda and CUDA tensors work as in a fully linked tool. Tools that
// link it (nmt-train, the tests) find it loaded. CPU-only LibTorch lines have nothing to load.

namespace nmt::runtime {

// When to load the CUDA half: kIfGpu where an NVIDIA driver is installed (/proc/driver/nvidia
// or /dev/nvidiactl), kAlways whatever the machine (NMT_LOAD_CUDA=always in the environment does
// the same: the tests check the lazy path on machines without a GPU).
enum class CudaLoad { kIfGpu, kAlways };

// Loads the CUDA half once (later calls answer from the first); true when it is in the process.
// A failed load is logged as a warning naming the library and the loader's error.
bool ensure_cuda_loaded(CudaLoad when = CudaLoad::kIfGpu);

}  // namespace nmt::runtime
