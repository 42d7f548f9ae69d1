#pragma once
// HPT_LAUNCHER marks every function template that launches a KOKKOS_LAMBDA. nvcc implements an
// extended __host__ __device__ lambda with per-translation-unit state that the wrapper's copy
// reads, but emits the wrapper's code as mergeable (weak) symbols: when two translation units
// instantiate the same launcher, the linker may keep code of one that reads the unset state of the
// other, and the launch calls a null pointer (seen on the H200: SIGSEGV in ensemble_rollout on the
// OpenMP backend of the CUDA build; the same nvcc defect is reported by ArborX, IPPL and Nalu).
// Under nvcc the launchers therefore have internal linkage, so each translation unit keeps its own
// consistent copy; run/check-lambda-linkage verifies a CUDA binary has no weak lambda wrapper left.
#if defined(__CUDACC__)
#define HPT_LAUNCHER static
#else
#define HPT_LAUNCHER
#endif
