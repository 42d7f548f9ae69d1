#include "core/host_blas.hpp"

#include <Kokkos_Core.hpp>

#include "core/error.hpp"

#ifdef HPT_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace hpt {

#ifdef HPT_HAVE_OPENBLAS
namespace {

int host_threads() {
  return Kokkos::DefaultHostExecutionSpace().concurrency();
}

// OpenBLAS keeps its own thread pool: sized once to Kokkos' host threads.
void set_threads_once() {
  static const bool done = [] {
    openblas_set_num_threads(host_threads());
    return true;
  }();
  (void)done;
}

}  // namespace

bool host_blas_available() {
  return true;
}

std::string host_blas_description() {
  return std::string(openblas_get_config()) + ", " + std::to_string(host_threads()) + " threads";
}

void host_gemm(bool trans_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
               float beta, float* c, int ldc) {
  set_threads_once();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a,
              lda, b, ldb, beta, c, ldc);
}

void host_gemm(bool trans_b, int m, int n, int k, const double* a, int lda, const double* b,
               int ldb, double beta, double* c, int ldc) {
  set_threads_once();
  cblas_dgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a,
              lda, b, ldb, beta, c, ldc);
}
#else
bool host_blas_available() {
  return false;
}

std::string host_blas_description() {
  return "";
}

void host_gemm(bool, int, int, int, const float*, int, const float*, int, float, float*, int) {
  HPT_REQUIRE(false, "host_gemm: this build has no host BLAS");
}

void host_gemm(bool, int, int, int, const double*, int, const double*, int, double, double*, int) {
  HPT_REQUIRE(false, "host_gemm: this build has no host BLAS");
}
#endif

}  // namespace hpt
