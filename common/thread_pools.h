#pragma once
// How long idle worker threads of the OpenMP runtime spin before they sleep. GNU OpenMP (libgomp,
// which LibTorch's intra-op pool and its MKL use) spins 300,000 iterations by default, a fraction
// of a millisecond after every parallel region: on a machine whose cores other jobs also use, the
// spinning threads take the time slices the working ones need (docs/scaling.md, "Figures behind
// the defaults"). libgomp reads its settings from the environment once, when it is loaded,
// before main: a process that finds libgomp loaded and neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT
// set sets a short spin and runs itself again (exec of its own binary: the same pid, name,
// arguments and descriptors).
// A user's own setting of either variable is kept.

namespace nmt {

// The spin set when the user set none: long enough for back-to-back parallel regions of one
// computation to reuse awake threads, short enough to yield within microseconds.
inline constexpr const char* kOpenMpSpinCount = "10000";

// Call first thing in main. Returns when nothing is to be done (no libgomp, a setting present, or
// the exec failed: then with a warning on stderr); else does not return.
void settle_openmp_waiting(char** argv);

}  // namespace nmt
