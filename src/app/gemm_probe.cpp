#include "app/gemm_probe.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <vector>

#include "core/host_blas.hpp"
#include "core/types.hpp"
#include "kernels/dense_ops.hpp"

namespace hpt::app {

namespace {

// The best of `repeats` timings of call() after one untimed call, as GFLOP/s of an m x n x k GEMM.
template <class Call>
double best_gflops(int m, int n, int k, int repeats, const Call& call) {
  call();
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    Kokkos::Timer t;
    call();
    best = std::min(best, t.seconds());
  }
  return 2.0 * double(m) * double(n) * double(k) / best * 1e-9;
}

}  // namespace

double measure_gemm_gflops(int m, int n, int k, int repeats) {
  View2<real> a("hpt::gemm_probe_a", m, k), b("hpt::gemm_probe_b", k, n),
      c("hpt::gemm_probe_c", m, n);
  Kokkos::deep_copy(a, real(0.5));
  Kokkos::deep_copy(b, real(0.25));
  const ExecSpace space;
  return best_gflops(m, n, k, repeats, [&] {
    detail::gemm(space, "N", "N", real(1), a, b, real(0), c);
    Kokkos::fence();
  });
}

double measure_host_blas_gflops(int m, int n, int k, int repeats) {
  if (!host_blas_available()) return -1.0;
  std::vector<real> a(std::size_t(m) * k, real(0.5)), b(std::size_t(k) * n, real(0.25)),
      c(std::size_t(m) * n);
  return best_gflops(m, n, k, repeats, [&] {
    host_gemm(false, m, n, k, a.data(), k, b.data(), n, real(0), c.data(), n);
  });
}

}  // namespace hpt::app
