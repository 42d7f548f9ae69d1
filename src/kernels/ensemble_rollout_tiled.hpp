#pragma once
// The ensemble rollout (docs/method.md#ensemble-rollout) for many scenarios: one team per (member,
// tile of R scenarios) loops over the Y steps. A step of the tile's GRU is a small matrix product:
// each team thread owns GRU units and keeps R accumulators per gate, and every weight it reads
// serves the R rows of the tile, where ensemble_rollout reads it once per path. The innermost loops
// run over the tile's rows, contiguous in scratch: vector lanes on a CPU, a register block on a
// GPU. The weights are re-laid out once per call with consecutive units adjacent (coalesced reads
// on a GPU).
//
// The step's helpers are the shared ones (prior_sample, loss_delta, advance_loss_features); the GRU
// update and the draws are written out in the tile loops: this kernel is register-bound, and as
// calls of gru_cell.hpp and rollout_draws.hpp they cost it 5 % on an H100 (batch and sweep sizes).
// Same contract, random draws and outputs as ensemble_rollout, up to rounding (sums run in another
// order). Each value is computed by one thread in a fixed order, so results do not depend on the
// team size or the thread count.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/math.hpp"
#include "core/rng.hpp"
#include "core/simd.hpp"
#include "core/types.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/rollout_features.hpp"
#include "kernels/rollout_loss_head.hpp"
#include "kernels/rollout_prior.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt {

// Most threads per team of the tiled rollout (its GPU launch bound; more units per team are
// looped).
constexpr int kTiledTeamThreads = 256;

namespace detail {

// Consecutive GRU units (and head rows) one thread owns: on a CPU a vector of 8 floats, so the
// innermost loop over units runs on contiguous weights; on a GPU one, with consecutive threads on
// consecutive units (coalesced reads).
template <class Space>
constexpr int tile_unit_block() {
  return team_vector_length<Space>() > 1 ? 1 : 8;
}

}  // namespace detail

// Scenarios per tile of the tiled rollout's wide variant on Space (the dispatcher uses it from this
// many scenarios on; fewer run as tiles of one): on a GPU 16 rows share each weight read; on a CPU
// 4 rows x 8 units x 3 gates of accumulators fill the vector registers.
template <class Space>
constexpr int rollout_tile_rows() {
  return detail::team_vector_length<Space>() > 1 ? 16 : 4;
}

namespace detail {

// Row t of a tile stored unit-major (value i of row t at p[i * stride + t]), as the x that
// advance_loss_features writes.
template <class Real>
struct TileRow {
  Real* p;
  int stride;
  KOKKOS_INLINE_FUNCTION Real& operator()(const int i) const { return p[i * stride]; }
};

// The RSSM weights re-laid out k-major for the tiled rollout, units padded with zeros to Hp and
// head rows to Qp (multiples of the unit block VB): gru(m, c, g*Hp + j) is gate g's weight of unit
// j on input column c (c < I: W = w_ih, else U = w_hh); heads(m, j, q) is A (q < S), B (q < 2S)
// or C's h-part (q = 2S, 2S+1) on unit j.
template <class Real, class Mem>
struct TiledWeights {
  View3<Real, Mem> gru;    // (E, I+H, 3*Hp)
  View3<Real, Mem> heads;  // (E, H, Qp)
  int Hp = 0, Qp = 0;
};

template <class Space, class Real>
HPT_LAUNCHER TiledWeights<Real, typename Space::memory_space> make_tiled_weights(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& p) {
  constexpr int VB = tile_unit_block<Space>();
  const int E = p.members(), H = p.hidden(), I = p.input(), S = p.stochastic();
  const int W = I + H, Q = 2 * S + 2;
  const int Hp = (H + VB - 1) / VB * VB, Qp = (Q + VB - 1) / VB * VB;
  TiledWeights<Real, typename Space::memory_space> t;
  t.Hp = Hp;
  t.Qp = Qp;
  t.gru = View3<Real, typename Space::memory_space>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::tiled.gru"), E, W, 3 * Hp);
  t.heads = View3<Real, typename Space::memory_space>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::tiled.heads"), E, H, Qp);
  const auto gru = t.gru;
  const auto heads = t.heads;
  const RssmParams<Real, typename Space::memory_space> params = p;
  Kokkos::parallel_for(
      "hpt::tiled_weights", Kokkos::RangePolicy<Space>(space, 0, std::int64_t(E) * W * 3 * Hp),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const int m = int(i / (std::int64_t(W) * 3 * Hp));
        const int c = int(i / (3 * Hp) % W);
        const int g = int(i % (3 * Hp)) / Hp, j = int(i % Hp);
        const int row = g * H + j;
        gru(m, c, g * Hp + j) = j >= H  ? Real(0)
                                : c < I ? params.gru.w_ih(m, row, c)
                                        : params.gru.w_hh(m, row, c - I);
      });
  Kokkos::parallel_for(
      "hpt::tiled_heads", Kokkos::RangePolicy<Space>(space, 0, std::int64_t(E) * H * Qp),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const int m = int(i / (std::int64_t(H) * Qp));
        const int j = int(i / Qp % H);
        const int q = int(i % Qp);
        heads(m, j, q) = q < S       ? params.prior_mean_w(m, q, j)
                         : q < 2 * S ? params.prior_scale_w(m, q - S, j)
                         : q < Q     ? params.loss_head_w(m, q - 2 * S, j)
                                     : Real(0);
      });
  return t;
}

}  // namespace detail

// Runs the rollout of ensemble_rollout with R scenarios per team (R = 1 and rollout_tile_rows are
// the instantiations the dispatcher uses). settings.team_size > 0 sets the threads per team.
template <int R, class Space, class Real>
HPT_LAUNCHER void ensemble_rollout_tiled(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const GruReset reset, const View2<Real, typename Space::memory_space>& h0,
    const RolloutInputs<Real, typename Space::memory_space>& in, const RolloutSettings& settings,
    const RolloutOutputs<Real, typename Space::memory_space>& out) {
  static_assert(R >= 1, "ensemble_rollout_tiled: R rows per tile");
  using Mem = typename Space::memory_space;
  const int E = params.members();
  const int H = params.hidden();
  const int S = params.stochastic();
  const int I = params.input();
  const int Y = settings.horizon;
  const int N = settings.scenarios;
  const FeatureUpdate mode = settings.feature_update;
  detail::check_rollout_arguments(params, h0, in, settings, out, "ensemble_rollout_tiled");
  if (E == 0) return;

  constexpr int VB = detail::tile_unit_block<Space>();
  const detail::TiledWeights<Real, Mem> tw = detail::make_tiled_weights(space, params);
  const int Hp = tw.Hp, Qp = tw.Qp;
  const int W = I + H;
  const int Q = 2 * S + 3;  // A h (S), B h (S), C_0 h, C_1 h, |h|^2
  const bool before = reset == GruReset::Before;
  // Scratch (unit-major tiles of R rows): xh = [x; h], then a work area that holds the new h, and
  // after it has been copied into xh, the head sums and s; with reset Before also r*h, z and W_n x.
  const int work = (H > Q + S ? H : Q + S) + (before ? 3 * H : 0);
  using Scratch = detail::ScratchView1<Space, Real>;
  using StateScratch = detail::ScratchView1<Space, LossState<Real>>;
  const std::size_t bytes = std::size_t(W) * R * sizeof(Real) + 16 +  // xh, 16-byte aligned
                            Scratch::shmem_size(std::size_t(work) * R) +
                            StateScratch::shmem_size(R);
  const int level = detail::scratch_level_for<Space>(bytes);

  const RssmParams<Real, Mem> p = params;
  const auto wt = tw.gru;
  const auto ht = tw.heads;
  const std::uint64_t seed = settings.seed;
  const Real clamp = Real(settings.clamp);
  const int tiles = (N + R - 1) / R;

  // At most kTiledTeamThreads threads per team and two teams per GPU multiprocessor: the compiler
  // keeps the R x 4 accumulators within 128 registers (135 unbounded, one team per multiprocessor
  // on an H200, measured with Nsight Compute).
  using Policy = Kokkos::TeamPolicy<Space, Kokkos::LaunchBounds<kTiledTeamThreads, 2>>;
  const auto body = KOKKOS_LAMBDA(const typename Policy::member_type& team) {
    const int m = team.league_rank() % E;
    const int n0 = team.league_rank() / E * R;
    const int rows = N - n0 < R ? N - n0 : R;
    // [x; h] on a 16-byte boundary: a row group of R values then loads as vectors.
    Real* const xh = static_cast<Real*>(
        team.team_scratch(level).get_shmem_aligned(std::size_t(W) * R * sizeof(Real), 16));
    Scratch wk(team.team_scratch(level), std::size_t(work) * R);
    StateScratch state(team.team_scratch(level), R);
    Real* const hn = wk.data();                       // (H, R) new h
    Real* const heads = wk.data();                    // (Q, R) after hn is copied
    Real* const s = wk.data() + Q * R;                // (S, R)
    Real* const rh = wk.data() + (work - 3 * H) * R;  // Before: (H, R) r*h, then z, then W_n x + b
    Real* const zb = rh + H * R;
    Real* const nb = zb + H * R;
    Real* const hcur = xh + I * R;

    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, W * R), [&](const int i) {
      const int c = i / R;
      xh[i] = c < I ? in.x0(c) : h0(m, c - I);
    });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, R), [&](const int t) {
      state(t) = in.loss_states(in.run);
      if (t < rows) out.loss_paths(n0 + t, m, 0) = math::exp(state(t).log_loss);
    });
    team.team_barrier();

    for (int k = 1; k <= Y; ++k) {
      // GRU: gate sums of my block of VB units for the R rows; [x; h] is read from scratch.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Hp / VB), [&](const int jb) {
        const int j0 = jb * VB;
        Real ar[R][VB], az[R][VB], anx[R][VB], anh[R][VB];
        for (int t = 0; t < R; ++t)
          for (int v = 0; v < VB; ++v) ar[t][v] = az[t][v] = anx[t][v] = anh[t][v] = Real(0);
        for (int c = 0; c < I; ++c) {  // W x
          const Real* wr = &wt(m, c, j0);
          const Real* wz = wr + Hp;
          const Real* wn = wr + 2 * Hp;
          const Real* xrow = assume_vector_aligned<R>(xh + c * R);
          for (int t = 0; t < R; ++t) {
            const Real xv = xrow[t];
            HPT_SIMD for (int v = 0; v < VB; ++v) {
              ar[t][v] += wr[v] * xv;
              az[t][v] += wz[v] * xv;
              anx[t][v] += wn[v] * xv;
            }
          }
        }
        for (int c = I; c < W; ++c) {  // U h (U_n h after the barrier with reset Before)
          const Real* wr = &wt(m, c, j0);
          const Real* wz = wr + Hp;
          const Real* wn = wr + 2 * Hp;
          const Real* xrow = assume_vector_aligned<R>(xh + c * R);
          for (int t = 0; t < R; ++t) {
            const Real xv = xrow[t];
            HPT_SIMD for (int v = 0; v < VB; ++v) {
              ar[t][v] += wr[v] * xv;
              az[t][v] += wz[v] * xv;
              anh[t][v] += before ? Real(0) : wn[v] * xv;
            }
          }
        }
        for (int v = 0; v < VB && j0 + v < H; ++v) {
          const int j = j0 + v;
          const Real br = p.gru.b_ih(m, j) + p.gru.b_hh(m, j);
          const Real bz = p.gru.b_ih(m, H + j) + p.gru.b_hh(m, H + j);
          const Real bin = p.gru.b_ih(m, 2 * H + j), bhn = p.gru.b_hh(m, 2 * H + j);
          for (int t = 0; t < R; ++t) {
            const Real r = math::sigmoid(ar[t][v] + br);
            const Real z = math::sigmoid(az[t][v] + bz);
            const Real hj = hcur[j * R + t];
            if (before) {
              rh[j * R + t] = r * hj;
              zb[j * R + t] = z;
              nb[j * R + t] = anx[t][v] + bin + bhn;
            } else {
              const Real n = math::tanh(anx[t][v] + bin + r * (anh[t][v] + bhn));
              hn[j * R + t] = (Real(1) - z) * n + z * hj;  // PyTorch: h' = (1 - z) n + z h
            }
          }
        }
      });
      team.team_barrier();
      if (before) {  // U_n (r * h) needs every unit's r first
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Hp / VB), [&](const int jb) {
          const int j0 = jb * VB;
          Real acc[R][VB];
          for (int t = 0; t < R; ++t)
            for (int v = 0; v < VB; ++v) acc[t][v] = Real(0);
          for (int c = 0; c < H; ++c) {
            const Real* wn = &wt(m, I + c, 2 * Hp + j0);
            for (int t = 0; t < R; ++t) {
              const Real xv = rh[c * R + t];
              HPT_SIMD for (int v = 0; v < VB; ++v) acc[t][v] += wn[v] * xv;
            }
          }
          for (int v = 0; v < VB && j0 + v < H; ++v) {
            const int j = j0 + v;
            for (int t = 0; t < R; ++t) {
              const Real z = zb[j * R + t];
              const Real n = math::tanh(nb[j * R + t] + acc[t][v]);
              hn[j * R + t] = (Real(1) - z) * hcur[j * R + t] + z * n;  // prototype's update
            }
          }
        });
        team.team_barrier();
      }
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, H * R),
                           [&](const int i) { hcur[i] = hn[i]; });
      team.team_barrier();

      // Heads on the new h: A h, B h, C_0 h, C_1 h per block of VB head rows, and |h|^2 per row
      // (the last R indices).
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Qp / VB + R), [&](const int qb) {
        if (qb >= Qp / VB) {
          const int t = qb - Qp / VB;
          Real acc = 0;
          for (int j = 0; j < H; ++j) acc += hcur[j * R + t] * hcur[j * R + t];
          heads[(Q - 1) * R + t] = acc;
          return;
        }
        const int q0 = qb * VB;
        Real acc[R][VB];
        for (int t = 0; t < R; ++t)
          for (int v = 0; v < VB; ++v) acc[t][v] = Real(0);
        for (int j = 0; j < H; ++j) {
          const Real* w = &ht(m, j, q0);
          const Real* hrow = assume_vector_aligned<R>(hcur + j * R);
          for (int t = 0; t < R; ++t) {
            const Real hv = hrow[t];
            HPT_SIMD for (int v = 0; v < VB; ++v) acc[t][v] += w[v] * hv;
          }
        }
        for (int v = 0; v < VB && q0 + v < Q - 1; ++v)
          for (int t = 0; t < R; ++t) heads[(q0 + v) * R + t] = acc[t][v];
      });
      team.team_barrier();

      // s = mu_s + sigma_s * eps for every (unit, row) of the tile's real rows.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, S * rows), [&](const int i2) {
        const int i = i2 / rows, t = i2 % rows;
        const Real eps = Real(rng::normal(rng::key(seed, n0 + t, m, k, i)));
        s[i * R + t] = detail::prior_sample(p, m, i, heads[i * R + t], heads[(S + i) * R + t], eps);
      });
      team.team_barrier();

      // Loss head, hidden norm and the path update: one thread per row.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int t) {
        Real cs0 = 0, cs1 = 0;
        for (int i = 0; i < S; ++i) {
          cs0 += p.loss_head_w(m, 0, H + i) * s[i * R + t];
          cs1 += p.loss_head_w(m, 1, H + i) * s[i * R + t];
        }
        const Real eps = Real(rng::normal(rng::key(seed, n0 + t, m, k, S)));
        const Real delta = detail::loss_delta(p, m, heads[(2 * S) * R + t] + cs0,
                                              heads[(2 * S + 1) * R + t] + cs1, eps);
        const detail::TileRow<Real> x{xh + t, R};
        detail::advance_loss_features(state(t), delta, mode, x, in.norm_mean, in.norm_inv_std,
                                      clamp);
        out.loss_paths(n0 + t, m, k) = math::exp(state(t).log_loss);
        out.hidden_norms(n0 + t, m, k - 1) = math::sqrt(heads[(Q - 1) * R + t]);
      });
      team.team_barrier();
    }

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int t) {
      for (int j = 0; j < H; ++j) out.final_latents(n0 + t, m, j) = hcur[j * R + t];
    });
  };

  // Threads per team: a GPU gives each unit a thread (up to what the registers allow); a CPU splits
  // its threads over the teams when there are fewer teams than threads.
  const int league = tiles * E;
  Policy probe(space, league, 1, 1);
  probe.set_scratch_size(level, Kokkos::PerTeam(bytes));
  const int most = probe.team_size_max(body, Kokkos::ParallelForTag());
  int team_size = settings.team_size;
  if (team_size <= 0) {
    const bool gpu = detail::team_vector_length<Space>() > 1;
    team_size = gpu ? (H + 31) / 32 * 32 : int(space.concurrency()) / league;
    if (team_size < 1) team_size = 1;
  }
  if (team_size > kTiledTeamThreads) team_size = kTiledTeamThreads;
  if (team_size > most) team_size = most;
  Policy policy(space, league, team_size, 1);
  policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for("hpt::ensemble_rollout_tiled", policy, body);
  detail::mean_hidden_norm(space, out);
}

}  // namespace hpt
