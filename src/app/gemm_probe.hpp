#pragma once
// The GEMM throughput of this machine, measured in the run that reports a fraction of it: the best
// of a few timed calls C (m x n) = A (m x k) B (k x n) in the working precision.
namespace hpt::app {

// GFLOP/s (2 m n k flops per call) of KokkosBlas::gemm on the default execution space.
double measure_gemm_gflops(int m, int n, int k, int repeats = 3);

// The host's optimised BLAS (OpenBLAS's cblas_?gemm on as many threads as Kokkos' host space),
// where the build has it: the SGEMM rate a CPU kernel is judged against. A negative value when it
// does not (CUDA builds, or no OpenBLAS at configure time).
double measure_host_blas_gflops(int m, int n, int k, int repeats = 3);

}  // namespace hpt::app
