#include "app/gemm_probe.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>

#include "core/types.hpp"
#include "kernels/dense_ops.hpp"

namespace hpt::app {

double measure_gemm_gflops(int m, int n, int k, int repeats) {
  View2<real> a("hpt::gemm_probe_a", m, k), b("hpt::gemm_probe_b", k, n),
      c("hpt::gemm_probe_c", m, n);
  Kokkos::deep_copy(a, real(0.5));
  Kokkos::deep_copy(b, real(0.25));
  const ExecSpace space;
  detail::gemm(space, "N", "N", real(1), a, b, real(0), c);  // warm-up
  Kokkos::fence();
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    Kokkos::Timer t;
    detail::gemm(space, "N", "N", real(1), a, b, real(0), c);
    Kokkos::fence();
    best = std::min(best, t.seconds());
  }
  return 2.0 * double(m) * double(n) * double(k) / best * 1e-9;
}

}  // namespace hpt::app
