#pragma once
// The host's optimised BLAS (OpenBLAS) where the build has it: row-major GEMMs on host memory, on
// as many threads as Kokkos' host execution space. CUDA builds and builds configured without
// OpenBLAS have none; callers then use KokkosBlas::gemm.
#include <string>

namespace hpt {

// Whether host_gemm calls an optimised BLAS in this build.
bool host_blas_available();

// "OpenBLAS <config>, N threads", or empty without it.
std::string host_blas_description();

// C (m x n) = A (m x k) op(B) + beta C, all row-major with leading dimensions lda, ldb, ldc;
// op(B) = B (k x n) or, with trans_b, the transpose of B (n x k). Requires host_blas_available().
void host_gemm(bool trans_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
               float beta, float* c, int ldc);
void host_gemm(bool trans_b, int m, int n, int k, const double* a, int lda, const double* b,
               int ldb, double beta, double* c, int ldc);

}  // namespace hpt
