#pragma once
// The ensemble rollout (docs/method.md#ensemble-rollout) as matrix products, for many scenarios on
// a CPU: every step of a member takes a block of its scenarios (B of N) together. The gate sums are
// two GEMMs, [B x I] W_ih^T and [B x H] W_hh^T, on the host's optimised BLAS where the build has it
// (core/host_blas.hpp; else KokkosBlas::gemm on all N at once); the GRU update is one vectorised
// pass per scenario (gru_update_after with the branch-free functions of
// core/math_vectorizable.hpp); the heads (A h, B h and C's h-part) a third GEMM [B x H]
// [A; B; C_h]^T; then the prior draw, the loss head and the path update one scenario at a time,
// with the shared helpers of the other rollout kernels (the draws and the prior's softplus in a
// vectorised loop). With the host BLAS one thread takes a block through all of it, so its sums
// stay in that core's cache.
// Same contract, random draws and outputs as ensemble_rollout up to rounding (sums in another
// order, exp/tanh/sigmoid/softplus within 2e-7), for reset After (the RSSM's convention; the
// prototype's Before runs on the tiled kernel).
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/error.hpp"
#include "core/host_blas.hpp"
#include "core/launcher.hpp"
#include "core/math.hpp"
#include "core/simd.hpp"
#include "core/types.hpp"
#include "kernels/dense_ops.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/gru_cell.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/rollout_draws.hpp"
#include "kernels/rollout_features.hpp"
#include "kernels/rollout_loss_head.hpp"
#include "kernels/rollout_prior.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt {

// Whether ensemble_rollout_gemm runs its products on the host's BLAS for this Space.
template <class Space>
bool rollout_gemm_uses_host_blas() {
  return host_blas_available() &&
         Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
}

namespace detail {

// C (n x q) = A (n x k) B^T (B: q x k), row-major and contiguous: the host BLAS with blas, else
// KokkosBlas::gemm on Space.
template <class Space, class VA, class VB, class VC>
void gemm_rows_by_transposed(const Space& space, const bool blas, const VA& a, const VB& b,
                             const VC& c) {
  using Real = typename VC::non_const_value_type;
  if (blas) {
    host_gemm(true, int(c.extent(0)), int(c.extent(1)), int(a.extent(1)), a.data(),
              int(a.extent(1)), b.data(), int(b.extent(1)), Real(0), c.data(), int(c.extent(1)));
  } else {
    gemm(space, "N", "T", Real(1), a, b, Real(0), c);
  }
}

// Working arrays of one call, per member m and scenario n: x (E, N, I), h (E, N, H), the gate sums
// of the input and recurrent products gx, gh (E, N, 3H), the head sums (E, N, Q) with
// Q = 2S + 2 (A_i h at i, B_i h at S + i, C_0 h and C_1 h at 2S, 2S + 1), their weights
// head_w (E, Q, H), |h|^2 and the loss states (E, N).
template <class Real, class Mem>
struct GemmRolloutArrays {
  View3<Real, Mem> x, h, gx, gh, head_w, heads;
  View2<Real, Mem> norm2;
  View2<LossState<Real>, Mem> state;

  GemmRolloutArrays(int E, int N, int H, int I, int S)
      : x(Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::rollout_gemm.x"), E, N, I),
        h(Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::rollout_gemm.h"), E, N, H),
        gx(Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::rollout_gemm.gx"), E, N, 3 * H),
        gh(Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::rollout_gemm.gh"), E, N, 3 * H),
        head_w(Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::rollout_gemm.head_w"), E,
               2 * S + 2, H),
        heads(Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::rollout_gemm.heads"), E, N,
              2 * S + 2),
        norm2(Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::rollout_gemm.norm2"), E, N),
        state(Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::rollout_gemm.state"), E, N) {}
};

// Value i of one scenario's x, contiguous (the accessor advance_loss_features writes through).
template <class Real>
struct ContiguousRow {
  Real* p;
  KOKKOS_INLINE_FUNCTION Real& operator()(const int i) const { return p[i]; }
};

// The start of every path (x0, h0, the run's loss state, output 0) and the head weights.
template <class Space, class Real, class Mem>
HPT_LAUNCHER void gemm_rollout_start(const Space& space, const RssmParams<Real, Mem>& p,
                                     const View2<Real, Mem>& h0, const RolloutInputs<Real, Mem>& in,
                                     const RolloutOutputs<Real, Mem>& out,
                                     const GemmRolloutArrays<Real, Mem>& a) {
  const int E = int(a.x.extent(0)), N = int(a.x.extent(1)), I = int(a.x.extent(2));
  const int H = int(a.h.extent(2)), S = p.stochastic();
  Kokkos::parallel_for(
      "hpt::rollout_gemm_start", Kokkos::RangePolicy<Space>(space, 0, std::int64_t(E) * N),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const int m = int(i / N), n = int(i % N);
        for (int c = 0; c < I; ++c) a.x(m, n, c) = in.x0(c);
        for (int j = 0; j < H; ++j) a.h(m, n, j) = h0(m, j);
        a.state(m, n) = in.loss_states(in.run);
        out.loss_paths(n, m, 0) = math::exp(a.state(m, n).log_loss);
      });
  Kokkos::parallel_for(
      "hpt::rollout_gemm_head_w",
      Kokkos::RangePolicy<Space>(space, 0, std::int64_t(E) * (2 * S + 2) * H),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const int m = int(i / (std::int64_t(2 * S + 2) * H));
        const int q = int(i / H % (2 * S + 2)), j = int(i % H);
        a.head_w(m, q, j) = q < S       ? p.prior_mean_w(m, q, j)
                            : q < 2 * S ? p.prior_scale_w(m, q - S, j)
                                        : p.loss_head_w(m, q - 2 * S, j);
      });
}

// |v|^2 of n values as kGemmNormLanes partial sums (value j into sum j mod lanes, each in order of
// j), then added in order: a fixed order that the host compiler vectorises into one vector of sums;
// a single sum waits an addition's latency per value.
constexpr int kGemmNormLanes = 8;
template <class Real>
KOKKOS_INLINE_FUNCTION Real squared_norm_in_lanes(const Real* const v, const int n) {
  Real lane[kGemmNormLanes] = {};
  const int full = n - n % kGemmNormLanes;
  for (int j0 = 0; j0 < full; j0 += kGemmNormLanes) {
    HPT_SIMD for (int l = 0; l < kGemmNormLanes; ++l) lane[l] += v[j0 + l] * v[j0 + l];
  }
  for (int j = full; j < n; ++j) lane[j - full] += v[j] * v[j];
  Real s = 0;
  for (int l = 0; l < kGemmNormLanes; ++l) s += lane[l];
  return s;
}

// The GRU update of path (m, n) from its gate sums (reset After, PyTorch's convention), and |h|^2
// of the new h.
template <class Real, class Mem>
struct GemmGruUpdate {
  GruWeights<Real, Mem> gru;
  GemmRolloutArrays<Real, Mem> a;

  KOKKOS_INLINE_FUNCTION void operator()(const int m, const int n) const {
    const int H = int(a.h.extent(2));
    Real* const h = &a.h(m, n, 0);
    const Real* const gx = &a.gx(m, n, 0);
    const Real* const gh = &a.gh(m, n, 0);
    const Real* const bi = &gru.b_ih(m, 0);
    const Real* const bh = &gru.b_hh(m, 0);
    HPT_SIMD for (int j = 0; j < H; ++j) {
      h[j] = gru_update_after<Real, true>(
          gx[j] + bi[j] + gh[j] + bh[j], gx[H + j] + bi[H + j] + gh[H + j] + bh[H + j],
          gx[2 * H + j] + bi[2 * H + j], gh[2 * H + j] + bh[2 * H + j], h[j]);
    }
    a.norm2(m, n) = squared_norm_in_lanes(h, H);
  }
};

// Prior units of one path drawn and sampled together, in a loop the host compiler vectorises.
constexpr int kGemmPriorChunk = 32;

// Step k of path (m, n) from its head sums: s = mu + sigma eps, the loss head on [h; s], the loss
// state and features, the outputs.
template <class Real, class Mem, class Features>
struct GemmPathStep {
  RssmParams<Real, Mem> p;
  RolloutOutputs<Real, Mem> out;
  GemmRolloutArrays<Real, Mem> a;
  Features features;
  std::uint64_t seed;
  int k;

  KOKKOS_INLINE_FUNCTION void operator()(const int m, const int n) const {
    const int H = int(a.h.extent(2)), S = p.stochastic();
    const Real* const q = &a.heads(m, n, 0);
    Real c0 = q[2 * S], c1 = q[2 * S + 1];
    const RolloutDraws draws{seed, n, m, k};
    for (int s0 = 0; s0 < S; s0 += kGemmPriorChunk) {
      const int len = S - s0 < kGemmPriorChunk ? S - s0 : kGemmPriorChunk;
      Real si[kGemmPriorChunk];  // draws and samples vectorised, then summed in order
      HPT_SIMD for (int s = 0; s < len; ++s) {
        const int i = s0 + s;
        si[s] = prior_sample<true>(p, m, i, q[i], q[S + i], Real(draws(i)));
      }
      for (int s = 0; s < len; ++s) {
        c0 += p.loss_head_w(m, 0, H + s0 + s) * si[s];
        c1 += p.loss_head_w(m, 1, H + s0 + s) * si[s];
      }
    }
    const Real eps = Real(draws(S));
    LossState<Real>& st = a.state(m, n);
    features.advance(st, loss_delta(p, m, c0, c1, eps), ContiguousRow<Real>{&a.x(m, n, 0)});
    out.loss_paths(n, m, k) = math::exp(st.log_loss);
    out.hidden_norms(n, m, k - 1) = math::sqrt(a.norm2(m, n));
  }
};

template <class Real, class Mem>
auto gemm_path_step(const RssmParams<Real, Mem>& p, const RolloutInputs<Real, Mem>& in,
                    const RolloutSettings& settings, const RolloutOutputs<Real, Mem>& out,
                    const GemmRolloutArrays<Real, Mem>& a, const int k) {
  const auto features = rollout_features(settings.feature_update, in.norm_mean, in.norm_inv_std,
                                         Real(settings.clamp));
  return GemmPathStep<Real, Mem, decltype(features)>{p, out, a, features, settings.seed, k};
}

// f(m, n) for every path, one Kokkos kernel.
template <class Space, class F>
HPT_LAUNCHER void for_every_path(const Space& space, const char* name, const int E, const int N,
                                 const F& f) {
  Kokkos::parallel_for(
      name, Kokkos::RangePolicy<Space>(space, 0, std::int64_t(E) * N),
      KOKKOS_LAMBDA(const std::int64_t i) { f(int(i / N), int(i % N)); });
}

// Step k of every path, whole products at a time: each GEMM takes one member's N scenarios (on the
// host BLAS's threads, or KokkosBlas::gemm), each update one kernel over every path.
template <class Space, class Real, class Mem>
void gemm_rollout_step_whole(const Space& space, const bool blas, const RssmParams<Real, Mem>& p,
                             const RolloutInputs<Real, Mem>& in, const RolloutSettings& settings,
                             const RolloutOutputs<Real, Mem>& out,
                             const GemmRolloutArrays<Real, Mem>& a, const int k) {
  using Kokkos::ALL;
  const int E = int(a.h.extent(0)), N = int(a.h.extent(1));
  space.fence();  // the BLAS does not order itself after Space's kernels
  for (int m = 0; m < E; ++m) {
    gemm_rows_by_transposed(space, blas, Kokkos::subview(a.x, m, ALL, ALL),
                            Kokkos::subview(p.gru.w_ih, m, ALL, ALL),
                            Kokkos::subview(a.gx, m, ALL, ALL));
    gemm_rows_by_transposed(space, blas, Kokkos::subview(a.h, m, ALL, ALL),
                            Kokkos::subview(p.gru.w_hh, m, ALL, ALL),
                            Kokkos::subview(a.gh, m, ALL, ALL));
  }
  for_every_path(space, "hpt::rollout_gemm_gru", E, N, GemmGruUpdate<Real, Mem>{p.gru, a});
  space.fence();
  for (int m = 0; m < E; ++m) {
    gemm_rows_by_transposed(space, blas, Kokkos::subview(a.h, m, ALL, ALL),
                            Kokkos::subview(a.head_w, m, ALL, ALL),
                            Kokkos::subview(a.heads, m, ALL, ALL));
  }
  for_every_path(space, "hpt::rollout_gemm_path", E, N, gemm_path_step(p, in, settings, out, a, k));
}

// Scenarios per block of the blocked form: 128 keep a block's gate sums (128 x 3H) in a core's L2
// cache; fewer where E x N would give under 16 blocks, down to 16. Not from the thread count: the
// blocks, and so the sums, are the same on every backend.
inline int gemm_block_rows(const int E, const int N) {
  const int per_block = int((std::int64_t(E) * N + 15) / 16);
  const int rounded = (per_block + 15) / 16 * 16;
  return rounded < 16 ? 16 : (rounded > 128 ? 128 : rounded);
}

// Step k of every path on the host, one block of a member's scenarios at a time: each thread takes
// a block through its three GEMMs (the host BLAS, one thread inside a parallel region), its updates
// and its path steps while the block's gate and head sums are still in its cache. Whole products
// write and read every sum through memory: at the sweep size 50 MB per member and step.
template <class Space, class Real, class Mem>
void gemm_rollout_step_blocked(const Space& space, const RssmParams<Real, Mem>& p,
                               const RolloutInputs<Real, Mem>& in, const RolloutSettings& settings,
                               const RolloutOutputs<Real, Mem>& out,
                               const GemmRolloutArrays<Real, Mem>& a, const int k) {
  const int E = int(a.h.extent(0)), N = int(a.h.extent(1)), H = int(a.h.extent(2));
  const int I = int(a.x.extent(2)), Q = int(a.heads.extent(2));
  const int rows = gemm_block_rows(E, N);
  const int blocks = (N + rows - 1) / rows;
  const GemmGruUpdate<Real, Mem> update{p.gru, a};
  const auto path = gemm_path_step(p, in, settings, out, a, k);
  const auto w_ih = p.gru.w_ih, w_hh = p.gru.w_hh;
  Kokkos::parallel_for("hpt::rollout_gemm_blocked",
                       Kokkos::RangePolicy<Space>(space, 0, E * blocks), [=](const int t) {
                         const int m = t / blocks, n0 = t % blocks * rows;
                         const int r = N - n0 < rows ? N - n0 : rows;
                         host_gemm(true, r, 3 * H, I, &a.x(m, n0, 0), I, &w_ih(m, 0, 0), I, Real(0),
                                   &a.gx(m, n0, 0), 3 * H);
                         host_gemm(true, r, 3 * H, H, &a.h(m, n0, 0), H, &w_hh(m, 0, 0), H, Real(0),
                                   &a.gh(m, n0, 0), 3 * H);
                         for (int n = n0; n < n0 + r; ++n) update(m, n);
                         host_gemm(true, r, Q, H, &a.h(m, n0, 0), H, &a.head_w(m, 0, 0), H, Real(0),
                                   &a.heads(m, n0, 0), Q);
                         for (int n = n0; n < n0 + r; ++n) path(m, n);
                       });
}

}  // namespace detail

// Runs the rollout of ensemble_rollout (reset After) with every member's N scenarios as matrix
// products, on the host's BLAS where rollout_gemm_uses_host_blas unless host_blas is false (tests
// of the KokkosBlas form). Allocates its working arrays (about 8 N H values per member) per call.
template <class Space, class Real>
HPT_LAUNCHER void ensemble_rollout_gemm(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const GruReset reset, const View2<Real, typename Space::memory_space>& h0,
    const RolloutInputs<Real, typename Space::memory_space>& in, const RolloutSettings& settings,
    const RolloutOutputs<Real, typename Space::memory_space>& out, const bool host_blas = true) {
  using Mem = typename Space::memory_space;
  detail::check_rollout_arguments(params, h0, in, settings, out, "ensemble_rollout_gemm");
  const bool blas = host_blas && rollout_gemm_uses_host_blas<Space>();
  HPT_REQUIRE(reset == GruReset::After, "ensemble_rollout_gemm: reset Before is not supported");
  const int E = params.members(), N = settings.scenarios;
  if (E == 0) return;
  const detail::GemmRolloutArrays<Real, Mem> a(E, N, params.hidden(), params.input(),
                                               params.stochastic());
  detail::gemm_rollout_start(space, params, h0, in, out, a);
  for (int k = 1; k <= settings.horizon; ++k) {
    if constexpr (Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible) {
      if (blas) {
        detail::gemm_rollout_step_blocked(space, params, in, settings, out, a, k);
        continue;
      }
    }
    detail::gemm_rollout_step_whole(space, blas, params, in, settings, out, a, k);
  }
  Kokkos::parallel_for(
      "hpt::rollout_gemm_final",
      Kokkos::RangePolicy<Space>(space, 0, std::int64_t(E) * N * params.hidden()),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const int H = int(a.h.extent(2));
        const int m = int(i / (std::int64_t(N) * H)), n = int(i / H % N), j = int(i % H);
        out.final_latents(n, m, j) = a.h(m, n, j);
      });
  detail::mean_hidden_norm(space, out);
}

}  // namespace hpt
