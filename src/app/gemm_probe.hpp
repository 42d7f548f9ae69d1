#pragma once
// The GEMM throughput of this machine, measured in the run that reports a fraction of it: the best
// of a few timed KokkosBlas::gemm calls C (m x n) = A (m x k) B (k x n) in the working precision.
namespace hpt::app {

// GFLOP/s (2 m n k flops per call).
double measure_gemm_gflops(int m, int n, int k, int repeats = 3);

}  // namespace hpt::app
