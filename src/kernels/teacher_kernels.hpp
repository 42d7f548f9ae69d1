#pragma once
// Device code of the `teacher` dataset style: a random tanh MLP evaluated on the device, with every
// dot product summed in ascending input order so that all backends, team sizes and thread counts
// agree (the CPU backends bit for bit; CUDA may differ in the last bits where it fuses
// multiply-adds).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/launcher.hpp"
#include "core/math.hpp"

namespace hpt::dataset {

// y = act(x w^T + b), act = tanh or identity; x: rows x in, w: out x in, b: out, y: rows x out.
// One team per tile of 16 rows x 16 outputs; the tiles of x and w pass through team scratch.
template <class Space, class Real>
HPT_LAUNCHER void teacher_dense(
    const Space& space,
    const Kokkos::View<const Real**, Kokkos::LayoutRight, typename Space::memory_space>& x,
    const Kokkos::View<const Real**, Kokkos::LayoutRight, typename Space::memory_space>& w,
    const Kokkos::View<const Real*, Kokkos::LayoutRight, typename Space::memory_space>& b,
    const Kokkos::View<Real**, Kokkos::LayoutRight, typename Space::memory_space>& y,
    bool apply_tanh) {
  constexpr int T = 16;
  constexpr int P = T + 1;  // padded row length: no shared-memory bank conflicts on CUDA
  using Policy = Kokkos::TeamPolicy<Space>;
  using Tile = Kokkos::View<Real**, Kokkos::LayoutRight, typename Space::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int rows = int(x.extent(0)), in = int(x.extent(1)), out = int(w.extent(0));
  const int tiles_out = (out + T - 1) / T;
  const int league = ((rows + T - 1) / T) * tiles_out;
  if (league == 0) return;
  const std::size_t bytes = 3 * Tile::shmem_size(T, P);
  Kokkos::parallel_for(
      "hpt::teacher_dense",
      Policy(space, league, Kokkos::AUTO).set_scratch_size(0, Kokkos::PerTeam(bytes)),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const int r0 = (team.league_rank() / tiles_out) * T;
        const int o0 = (team.league_rank() % tiles_out) * T;
        Tile xs(team.team_scratch(0), T, P);   // xs(i, k): x(r0 + i, k0 + k)
        Tile ws(team.team_scratch(0), T, P);   // ws(j, k): w(o0 + j, k0 + k)
        Tile acc(team.team_scratch(0), T, P);  // acc(i, j): running sum of output (r0 + i, o0 + j)
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, T * T),
                             [&](const int e) { acc(e / T, e % T) = Real(0); });
        for (int k0 = 0; k0 < in; k0 += T) {
          const int kn = in - k0 < T ? in - k0 : T;
          team.team_barrier();  // the previous tiles are no longer read
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, T * T), [&](const int e) {
            const int i = e / T, k = e % T;
            xs(i, k) = (r0 + i < rows && k < kn) ? x(r0 + i, k0 + k) : Real(0);
            ws(i, k) = (o0 + i < out && k < kn) ? w(o0 + i, k0 + k) : Real(0);
          });
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, T * T), [&](const int e) {
            const int i = e / T, j = e % T;
            Real s = acc(i, j);
            for (int k = 0; k < kn; ++k) s += xs(i, k) * ws(j, k);
            acc(i, j) = s;
          });
        }
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, T * T), [&](const int e) {
          const int i = e / T, j = e % T;
          if (r0 + i < rows && o0 + j < out) {
            const Real v = acc(i, j) + b(o0 + j);
            y(r0 + i, o0 + j) = apply_tanh ? math::tanh(v) : v;
          }
        });
      });
}

// labels(r) = the index of the first maximum of y(r, :).
template <class Space, class Real>
HPT_LAUNCHER void argmax_rows(
    const Space& space,
    const Kokkos::View<const Real**, Kokkos::LayoutRight, typename Space::memory_space>& y,
    const Kokkos::View<int*, Kokkos::LayoutRight, typename Space::memory_space>& labels) {
  const int cols = int(y.extent(1));
  Kokkos::parallel_for(
      "hpt::teacher_argmax", Kokkos::RangePolicy<Space>(space, 0, y.extent(0)),
      KOKKOS_LAMBDA(const int r) {
        int best = 0;
        for (int k = 1; k < cols; ++k)
          if (y(r, k) > y(r, best)) best = k;
        labels(r) = best;
      });
}

// A teacher network on the host: layer l maps widths[l] -> widths[l + 1]; w[l] is widths[l+1] x
// widths[l] row-major, b[l] has widths[l+1] entries. Hidden layers tanh, the output layer linear.
struct TeacherWeights {
  std::vector<int> widths;
  std::vector<std::vector<double>> w, b;
};

// Outputs (rows x widths.back()) of the teacher on inputs x (rows x widths[0], row-major, host),
// computed on `space` in double, in chunks of rows so the activations of wide teachers fit in
// device memory.
template <class Space>
Kokkos::View<double**, Kokkos::LayoutRight, typename Space::memory_space> teacher_forward(
    const Space& space, const TeacherWeights& t, const std::vector<double>& x, std::int64_t rows) {
  using Mem = typename Space::memory_space;
  using Matrix = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;
  using MatrixU =
      Kokkos::View<double**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostMatrixU = Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostVectorU = Kokkos::View<const double*, Kokkos::LayoutRight, Kokkos::HostSpace,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int layers = int(t.widths.size()) - 1;
  const int in = t.widths.front(), out = t.widths.back();
  const int widest = *std::max_element(t.widths.begin(), t.widths.end());

  std::vector<Matrix> w(static_cast<std::size_t>(layers));
  std::vector<Kokkos::View<double*, Kokkos::LayoutRight, Mem>> b(static_cast<std::size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    w[l] = Matrix("hpt::teacher_w", std::size_t(t.widths[l + 1]), std::size_t(t.widths[l]));
    Kokkos::deep_copy(w[l], HostMatrixU(t.w[l].data(), w[l].extent(0), w[l].extent(1)));
    b[l] = Kokkos::View<double*, Kokkos::LayoutRight, Mem>("hpt::teacher_b",
                                                           std::size_t(t.widths[l + 1]));
    Kokkos::deep_copy(b[l], HostVectorU(t.b[l].data(), b[l].extent(0)));
  }
  Matrix x_dev("hpt::teacher_x", std::size_t(rows), std::size_t(in));
  Kokkos::deep_copy(x_dev, HostMatrixU(x.data(), std::size_t(rows), std::size_t(in)));
  Matrix y_dev("hpt::teacher_y", std::size_t(rows), std::size_t(out));

  // Two activation buffers of chunk x widest (at most 2^26 doubles each).
  const std::int64_t chunk =
      std::max<std::int64_t>(1, std::min<std::int64_t>(rows, (std::int64_t(1) << 26) / widest));
  Kokkos::View<double*, Mem> buf0("hpt::teacher_act0", std::size_t(chunk * widest));
  Kokkos::View<double*, Mem> buf1("hpt::teacher_act1", std::size_t(chunk * widest));
  for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::size_t n = std::size_t(std::min(chunk, rows - r0));
    MatrixU act(x_dev.data() + r0 * in, n, std::size_t(in));
    for (int l = 0; l < layers; ++l) {
      const bool last = l == layers - 1;
      double* dst = last ? y_dev.data() + r0 * out : (l % 2 == 0 ? buf0.data() : buf1.data());
      MatrixU next(dst, n, std::size_t(t.widths[l + 1]));
      teacher_dense<Space, double>(space, act, w[l], b[l], next, !last);
      act = next;
    }
  }
  return y_dev;
}

}  // namespace hpt::dataset
