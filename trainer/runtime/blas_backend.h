#pragma once
// Which BLAS LibTorch's matrix products run on. Debian's LibTorch links the generic libblas.so.3,
// which the alternatives system points at the reference BLAS unless an optimised one such as
// libopenblas0-pthread is installed; the reference BLAS is far slower. Tools check this at
// start-up and warn, so a slow machine is never mistaken for a slow model.

#include <c10/core/ScalarType.h>

#include <string>

namespace nmt::runtime {

struct BlasBackend {
  std::string name;     // "openblas", "mkl", "blis", "reference", or "unknown"
  std::string library;  // resolved path of the loaded library that holds the BLAS, empty if none
  bool is_reference() const { return name == "reference"; }
};

// Inspects the shared libraries loaded into this process (after resolving symlinks such as
// /etc/alternatives). A LibTorch that links MKL statically (PyPI's) reports "mkl" with the
// library that holds it; one that links another BLAS statically reports "unknown".
BlasBackend detect_blas_backend();

// Measured matrix-multiply throughput in GFLOP/s on the CPU: the best of `repeats` timed products
// of two n x n matrices of `type` (fp32 by default; bf16 for the precision probe) after one
// untimed warm-up, on the current intra-op thread count.
double measure_matmul_gflops(int n = 1024, int repeats = 5, c10::ScalarType type = c10::kFloat);

// Sets the BLAS library's own thread count (OpenBLAS, MKL or BLIS, looked up at run time).
// Returns false when the loaded BLAS offers no such call (the reference BLAS is single-threaded).
bool set_blas_threads(int threads);

// The BLAS library's own thread count now (in the calling thread for MKL); 0 when the loaded BLAS
// offers no such query.
int blas_threads();

// For one of several threads that each run their own kernels on shared CPUs (the translator's
// workers), called in each: LibTorch's intra-op pool and MKL (a per-thread setting) run one thread
// when called from this thread. OpenBLAS and BLIS have only a process-wide setting, which is not
// safe to change while another thread is in a product: whoever starts the workers sets it with
// set_blas_threads(1) before they start and restores blas_threads()'s earlier answer after.
void single_threaded_kernels_here();

// The CPUs this process may run on: its affinity mask (what taskset, numactl, mpirun's binding and
// Slurm's task/affinity or cgroup cpusets leave it), not the machine's core count, and at most
// SLURM_CPUS_PER_TASK when Slurm sets it (a job that binds no CPUs); at least 1.
int available_cpus();

// Gives a CPU process `threads` threads (0: available_cpus()) without the two pools fighting:
// LibTorch's intra-op pool (OpenMP) and OpenBLAS's pthreads each spin-wait on every core they own,
// so matrix products get N BLAS threads and element-wise kernels one, which trains faster than
// both pools at N (docs/scaling.md, "Figures behind the defaults").
void configure_cpu_threads(int threads);

// Logs the backend; warns when it is the reference BLAS. Returns the detected backend.
BlasBackend check_blas_backend();

}  // namespace nmt::runtime
