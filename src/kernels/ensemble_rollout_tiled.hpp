#pragma once
// The ensemble rollout (docs/method.md#ensemble-rollout) for many scenarios: one team per (member,
// tile of R scenarios) loops over the Y steps. A step of the tile's GRU is a small matrix product
// [R x (V+H)] x [(V+H) x 3H] (V: the columns of x that change, see below): each team thread owns a
// register block of RB rows x UB units and keeps RB x UB accumulators per gate (four: r, z and the
// input and recurrent parts of n), so each weight it reads serves RB rows and each [x; h] value it
// reads serves UB units. The weights are re-laid out once per call with consecutive units adjacent
// (coalesced reads on a GPU) and read one column ahead of the products (software prefetch). [x; h]
// lives in team scratch, unit-major, and is read with load_block_shared (on a GPU shared-memory
// loads: Kokkos' scratch pointer is generic).
//  - CPU: RB = R = 4 rows x UB = 8 units (vector lanes over the units), as before.
//  - GPU: R = 20 rows per tile, RB = 20 rows x UB = 1 unit per thread (float), so H = 256 takes 256
//    threads, the team reads each weight once, and two teams fit a multiprocessor
//    (LaunchBounds<256, 2>). With 20 rows, 5 x 1024 paths are 256 teams: one wave on 132
//    multiprocessors (tiles of 16 took 320 teams, 1.2 waves that cost two). The new h stays in the
//    owner thread's registers across the barrier that ends the products (no scratch copy), which
//    keeps a tile of 20 rows within Kokkos 3.4's 40 KB of level-0 scratch.
// Only the columns of x that change along a path (rollout_path_features.hpp: 9 in mode Rich, 1 in
// LossOnly) are in the tile: every row starts from the same x0 and the other columns keep its
// values, so their part of W x is one product per member, summed once per call (make_tiled_weights)
// and taken as the accumulators' start; the products run over those columns and h only (at H =
// 128, I = 64 in mode Rich 137 of the 192 columns).
// The heads (A h, B h of the prior, C's h-part of the loss head, |h|^2) are a second product with
// the columns of A and B interleaved in pairs, so the thread that owns a pair (A_i, B_i) of a few
// rows forms s_i at once, from a draw made during the previous step's loss head by the threads
// that the loss head leaves idle; the loss head and the path update run one thread per row. On a
// GPU a thread owns two pairs of 4 rows, so the heads of a tile are one round of the team even at
// H = 128 (128 threads).
// Where the scratch allows it (H = 128 on a GPU, not 256), the new h goes to a second buffer and
// the two swap roles each step: no copy and one barrier less per step.
//
// The step's helpers are the shared ones (prior_sample, loss_delta, advance_loss_features); the GRU
// update and the draws are written out in the tile loops: this kernel is register-bound, and as
// calls of gru_cell.hpp and rollout_draws.hpp they cost it 5 % on an H100 (batch and sweep sizes).
// Same contract, random draws and outputs as ensemble_rollout, up to rounding (sums run in another
// order: the constant columns' part first, then the changing columns and h). Each value is computed
// by one thread in a fixed order (the column order of the product, whatever RB and UB are), so
// results do not depend on the team size or the thread count, and the register blocks change no
// bits on a given backend.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/math.hpp"
#include "core/simd.hpp"
#include "core/types.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/rollout_draws.hpp"
#include "kernels/rollout_features.hpp"
#include "kernels/rollout_loss_head.hpp"
#include "kernels/rollout_path_features.hpp"
#include "kernels/rollout_prior.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt {

// Most threads per team of the tiled rollout (its GPU launch bound; more work items per team are
// looped).
constexpr int kTiledTeamThreads = 256;

namespace detail {

// Consecutive GRU units one thread owns: on a CPU a vector of 8 floats, so the innermost loop over
// units runs on contiguous weights; on a GPU one in float (consecutive threads on consecutive
// units: coalesced reads, and the thread's rows are the whole tile, so the team reads each weight
// once), two in double.
template <class Space, class Real>
constexpr int tile_unit_block() {
  return team_vector_length<Space>() > 1 ? (sizeof(Real) > 4 ? 2 : 1) : 8;
}

// The largest divisor of R that is at most `most`.
constexpr int largest_divisor_at_most(const int R, const int most) {
  int d = most < R ? most : R;
  while (d > 1 && R % d != 0) --d;
  return d;
}

// Rows of a tile one thread owns in the GRU product: on a CPU the whole tile; on a GPU up to 20
// in float (4 x 20 x 1 accumulators, within the 128 registers of two 256-thread teams per
// multiprocessor), 5 in double.
template <class Space, class Real, int R>
constexpr int tile_row_block() {
  return team_vector_length<Space>() > 1 ? largest_divisor_at_most(R, sizeof(Real) > 4 ? 5 : 20)
                                         : R;
}

// Columns of the heads' product one thread owns (pairs (A_i, B_i) stay with one thread): on a CPU a
// vector of 8 floats, on a GPU two pairs (one 16-byte load of weights per h value; with S = 32 a
// tile of 20 rows is 18 x 5 = 90 items, one round even of the 128 threads of H = 128, where one
// pair per thread took 170 items in two rounds).
template <class Space>
constexpr int tile_head_unit_block() {
  return team_vector_length<Space>() > 1 ? 4 : 8;
}

// Rows of a tile one thread owns in the heads' product (its columns: tile_head_unit_block).
template <class Space, int R>
constexpr int tile_head_row_block() {
  return team_vector_length<Space>() > 1 ? largest_divisor_at_most(R, 4) : R;
}

}  // namespace detail

// Scenarios per tile of the tiled rollout's wide variant on Space (the dispatcher uses it from this
// many scenarios on; fewer run as tiles of one): on a GPU 20 rows share each weight read (and E x
// 1024 paths fill the multiprocessors in one wave); on a CPU 4 rows x 8 units x 3 gates of
// accumulators fill the vector registers.
template <class Space>
constexpr int rollout_tile_rows() {
  return detail::team_vector_length<Space>() > 1 ? 20 : 4;
}

namespace detail {

// Row t of a tile's changing columns of x stored unit-major (column c of row t at
// p[path_feature_slot(c) * stride + t]), as the x that advance_loss_features writes (it writes
// only those columns).
template <class Real>
struct TileRow {
  Real* p;
  int stride;
  KOKKOS_INLINE_FUNCTION Real& operator()(const int c) const {
    return p[path_feature_slot(c) * stride];
  }
};

// The RSSM weights re-laid out k-major for the tiled rollout, units padded with zeros to Hp (a
// multiple of the unit block VB) and head columns to Qp (a multiple of the head block QB), with the
// constant columns of x already applied: gru(m, c, g*Hp + j) is gate g's weight of unit j on column
// c of [x_v; h], where x_v are the V = path_feature_count(mode) columns of x that change along a
// path (c < V: W = w_ih on column path_feature_column(c), c < V+H: U = w_hh, c = V+H: zeros, read
// by the last column's prefetch); xw(m, g*Hp + j) is gate g's W x0 of unit j over the other columns
// (ascending, in Real), zero for padding units; heads(m, j, q) on unit j is A_i (q = 2i, i < S),
// B_i (q = 2i+1) or C's h-part (q = 2S, 2S+1), zero beyond.
template <class Real, class Mem>
struct TiledWeights {
  View3<Real, Mem> gru;    // (E, V+H+1, 3*Hp)
  View2<Real, Mem> xw;     // (E, 3*Hp)
  View3<Real, Mem> heads;  // (E, H, Qp)
  int Hp = 0, Qp = 0, V = 0;
};

template <class Space, class Real, int VB = tile_unit_block<Space, Real>(),
          int QB = tile_head_unit_block<Space>()>
HPT_LAUNCHER TiledWeights<Real, typename Space::memory_space> make_tiled_weights(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& p,
    const View1<Real, typename Space::memory_space>& x0, const FeatureUpdate mode) {
  static_assert(QB % 2 == 0, "make_tiled_weights: head columns come in (A_i, B_i) pairs");
  const int E = p.members(), H = p.hidden(), I = p.input(), S = p.stochastic();
  const int V = path_feature_count(mode), W = V + H, Q = 2 * S + 2;
  const int Hp = (H + VB - 1) / VB * VB, Qp = (Q + QB - 1) / QB * QB;
  TiledWeights<Real, typename Space::memory_space> t;
  t.Hp = Hp;
  t.Qp = Qp;
  t.V = V;
  t.gru = View3<Real, typename Space::memory_space>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::tiled.gru"), E, W + 1, 3 * Hp);
  t.xw = View2<Real, typename Space::memory_space>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::tiled.xw"), E, 3 * Hp);
  t.heads = View3<Real, typename Space::memory_space>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::tiled.heads"), E, H, Qp);
  const auto gru = t.gru;
  const auto xw = t.xw;
  const auto heads = t.heads;
  const RssmParams<Real, typename Space::memory_space> params = p;
  Kokkos::parallel_for(
      "hpt::tiled_weights",
      Kokkos::RangePolicy<Space>(space, 0, std::int64_t(E) * (W + 1) * 3 * Hp),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const int m = int(i / (std::int64_t(W + 1) * 3 * Hp));
        const int c = int(i / (3 * Hp) % (W + 1));
        const int g = int(i % (3 * Hp)) / Hp, j = int(i % Hp);
        const int row = g * H + j;
        gru(m, c, g * Hp + j) = j >= H || c >= W ? Real(0)
                                : c < V          ? params.gru.w_ih(m, row, path_feature_column(c))
                                                 : params.gru.w_hh(m, row, c - V);
      });
  // W x0 over the constant columns, once per member: the same for every path and step.
  Kokkos::parallel_for(
      "hpt::tiled_constant_inputs", Kokkos::RangePolicy<Space>(space, 0, std::int64_t(E) * 3 * Hp),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const int m = int(i / (3 * Hp));
        const int g = int(i % (3 * Hp)) / Hp, j = int(i % Hp);
        Real sum = 0;
        if (j < H)
          for (int c = 0; c < I; ++c)
            if (path_feature_constant(mode, c)) sum += params.gru.w_ih(m, g * H + j, c) * x0(c);
        xw(m, g * Hp + j) = sum;
      });
  Kokkos::parallel_for(
      "hpt::tiled_heads", Kokkos::RangePolicy<Space>(space, 0, std::int64_t(E) * H * Qp),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const int m = int(i / (std::int64_t(H) * Qp));
        const int j = int(i / Qp % H);
        const int q = int(i % Qp);
        heads(m, j, q) = q < 2 * S ? (q % 2 == 0 ? params.prior_mean_w(m, q / 2, j)
                                                 : params.prior_scale_w(m, q / 2, j))
                         : q < Q   ? params.loss_head_w(m, q - 2 * S, j)
                                   : Real(0);
      });
  return t;
}

// A team body that does nothing: asks a host policy its team size limit before the real body
// exists (its captures depend on the team size).
struct NoTeamWork {
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member&) const {}
};

}  // namespace detail

// FLOPs the tiled rollout executes per member-step of a rollout of N scenarios x Y steps:
// rollout_flops_per_member_step counts the GRU's full 6 H (H + I); the tiled kernel multiplies
// only the V changing columns of x (and h) per step, and the other I - V columns with x0 once per
// member and call (6 H (I - V), shared by the member's N x Y member-steps).
inline double tiled_rollout_executed_flops_per_member_step(int hidden, int input, int stochastic,
                                                           FeatureUpdate mode, int scenarios,
                                                           int horizon) {
  const double full = rollout_flops_per_member_step(hidden, input, stochastic);
  const double constant = 6.0 * hidden * (input - detail::path_feature_count(mode));
  const double shared = double(scenarios) * (horizon > 0 ? horizon : 1);
  return full - constant + constant / shared;
}

// Runs the rollout of ensemble_rollout with R scenarios per team (R = 1 and rollout_tile_rows are
// the instantiations the dispatcher uses), each thread owning RB of a tile's rows and UB units, RBH
// rows x HU columns in the heads, with the weights read a column ahead into registers (PF, the
// GPU's form) or in place (the CPU's); the defaults are the backend's choice, RB and RBH must
// divide R.
// settings.team_size > 0 sets the threads per team.
template <int R, class Space, class Real, int RB = detail::tile_row_block<Space, Real, R>(),
          int UB = detail::tile_unit_block<Space, Real>(),
          int RBH = detail::tile_head_row_block<Space, R>(),
          bool PF = (detail::team_vector_length<Space>() > 1),
          int HU = detail::tile_head_unit_block<Space>()>
HPT_LAUNCHER void ensemble_rollout_tiled(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const GruReset reset, const View2<Real, typename Space::memory_space>& h0,
    const RolloutInputs<Real, typename Space::memory_space>& in, const RolloutSettings& settings,
    const RolloutOutputs<Real, typename Space::memory_space>& out) {
  static_assert(R >= 1, "ensemble_rollout_tiled: R rows per tile");
  static_assert(RB >= 1 && R % RB == 0, "ensemble_rollout_tiled: RB must divide R");
  static_assert(RBH >= 1 && R % RBH == 0, "ensemble_rollout_tiled: RBH must divide R");
  static_assert(UB >= 1, "ensemble_rollout_tiled: UB units per thread");
  static_assert(HU >= 2 && HU % 2 == 0, "ensemble_rollout_tiled: HU even (head column pairs)");
  using Mem = typename Space::memory_space;
  const int E = params.members();
  const int H = params.hidden();
  const int S = params.stochastic();
  const int Y = settings.horizon;
  const int N = settings.scenarios;
  const FeatureUpdate mode = settings.feature_update;
  detail::check_rollout_arguments(params, h0, in, settings, out, "ensemble_rollout_tiled");
  if (E == 0) return;

  const detail::TiledWeights<Real, Mem> tw =
      detail::make_tiled_weights<Space, Real, UB, HU>(space, params, in.x0, mode);
  const int Hp = tw.Hp, Qp = tw.Qp;
  const int V = tw.V;  // columns of x in the tile (the others' part of W x is tw.xw)
  const int W = V + H;
  const bool before = reset == GruReset::Before;
  const int unit_blocks = Hp / UB;  // GRU product: items (row group, unit block)
  const int items = unit_blocks * (R / RB);
  const int head_blocks = Qp / HU;  // heads: items (row group, column block), then |h|^2
  const int head_items = (head_blocks + 1) * (R / RBH);
  const int tiles = (N + R - 1) / R;
  const int league = tiles * E;

  // Threads per team: a GPU gives each (row group, unit block) a thread (up to the launch bound); a
  // CPU splits its threads over the teams when there are fewer teams than threads.
  using Policy = Kokkos::TeamPolicy<Space, Kokkos::LaunchBounds<kTiledTeamThreads, 2>>;
  const bool gpu = detail::team_vector_length<Space>() > 1;
  int most = kTiledTeamThreads;
  if (!gpu) {  // a host team's limit is its thread pool's, whatever the body
    Policy probe(space, league, 1, 1);
    const int host_most = probe.team_size_max(detail::NoTeamWork{}, Kokkos::ParallelForTag());
    if (host_most < most) most = host_most;
  }
  int team_size = settings.team_size;
  if (team_size <= 0) {
    team_size = gpu ? items : int(space.concurrency()) / league;
    if (team_size < 1) team_size = 1;
  }
  if (team_size > most) team_size = most;
  const int sums = 2 * S + 3;
  using Scratch = detail::ScratchView1<Space, Real>;
  using StateScratch = detail::ScratchView1<Space, LossState<Real>>;
  const RssmParams<Real, Mem> p = params;
  const auto wt = tw.gru;
  const auto xw = tw.xw;
  const auto ht = tw.heads;
  const std::uint64_t seed = settings.seed;
  const Real clamp = Real(settings.clamp);

  // Two passes over the same body: the first asks the kernel's limit on the team size with the
  // chosen one; where that is lower (not expected: the launch bound allows 256), the second runs
  // with the limit and the layout that goes with it.
  for (int pass = 0; pass < 2; ++pass) {
    // Scratch (unit-major tiles of R rows): xh = [x_v; h]; a second h (work, H x R) unless the new
    // h stays in registers; with reset Before also r*h, z and W_n x; s and the heads' sums C_0 h,
    // C_1 h, |h|^2; the loss states.
    const auto scratch_bytes = [&](const int work) {
      return std::size_t(W) * R * sizeof(Real) + 16 +  // xh, 16-byte aligned
             std::size_t(work > 0 ? Scratch::shmem_size(std::size_t(work) * R) : 0) +
             Scratch::shmem_size(std::size_t(sums) * R) + StateScratch::shmem_size(R);
    };
    // With reset After the new h goes to a second h buffer and the two swap roles each step (no
    // copy, and no barrier between the products and the heads but the one that ends the
    // products) where the second buffer leaves the scratch on chip (on a GPU H = 128, not 256);
    // else, with one item per thread (the GPU's choice), the new h waits in the owner's registers
    // for the barrier that ends the products, then is written over the old; otherwise it goes
    // through scratch and is copied.
    const bool swap_h = !before && detail::scratch_level_for<Space>(scratch_bytes(H)) == 0;
    const bool regs = !before && !swap_h && team_size >= items;
    const int work = (regs ? 0 : H) + (before ? 3 * H : 0);
    const std::size_t bytes = scratch_bytes(work);
    const int level = detail::scratch_level_for<Space>(bytes);

    // At most kTiledTeamThreads threads per team and two teams per GPU multiprocessor: the compiler
    // keeps the 4 x RB x UB accumulators within 128 registers.
    const auto body = KOKKOS_LAMBDA(const typename Policy::member_type& team) {
      const int m = team.league_rank() % E;
      const int n0 = team.league_rank() / E * R;
      const int rows = N - n0 < R ? N - n0 : R;
      // [x_v; h] on a 16-byte boundary: a row group of RB values then loads as vectors.
      Real* const xh = static_cast<Real*>(
          team.team_scratch(level).get_shmem_aligned(std::size_t(W) * R * sizeof(Real), 16));
      Real* hn = nullptr;  // (H, R) new h (scratch path)
      Real* rh = nullptr;  // Before: (H, R) r*h, then z, then W_n x + b
      if (work > 0) {
        Scratch wk(team.team_scratch(level), std::size_t(work) * R);
        hn = wk.data();
        rh = wk.data() + (regs ? 0 : H * R);
      }
      Real* const zb = before ? rh + H * R : nullptr;
      Real* const nb = before ? rh + 2 * H * R : nullptr;
      Scratch sm(team.team_scratch(level), std::size_t(sums) * R);
      Real* const s = sm.data();                        // (S, R)
      Real* const csum = sm.data() + S * R;             // (2, R) C_0 h, C_1 h
      Real* const norm2 = sm.data() + (S + 2) * R;      // (R) |h|^2
      Real* const prior_eps = sm.data() + (S + 3) * R;  // (S, R) the prior's draws of the step
      StateScratch state(team.team_scratch(level), R);
      Real* hcur = xh + V * R;  // h of the step (swap_h: alternates with hn)
      // The prior's draws of step k for the tile's rows into prior_eps: by the threads beyond the
      // first `rows` (those run the loss head meanwhile) where the team has twice as many, else by
      // all.
      const auto draw_prior = [&](const int k) {
        const int nt = team.team_size(), first = nt >= 2 * rows ? rows : 0;
        for (int it = team.team_rank() - first; it >= 0 && it < S * rows; it += nt - first) {
          const int t = it % rows, i = it / rows;
          prior_eps[i * R + t] = Real(detail::RolloutDraws(seed, n0 + t, m, k)(i));
        }
      };

      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, W * R), [&](const int i) {
        const int c = i / R;
        xh[i] = c < V ? in.x0(detail::path_feature_column(c)) : h0(m, c - V);
      });
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, R), [&](const int t) {
        state(t) = in.loss_states(in.run);
        if (t < rows) out.loss_paths(n0 + t, m, 0) = math::exp(state(t).log_loss);
      });
      if (Y > 0) draw_prior(1);
      team.team_barrier();

      for (int k = 1; k <= Y; ++k) {
        // GRU: gate sums of my RB rows x UB units, from W x0 of the constant columns on; [x_v; h]
        // is read from scratch, the weights one column ahead.
        Real hreg[RB][UB];  // the new h of my item (regs)
        int mine = -1;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, items), [&](const int it) {
          const int jb = it % unit_blocks, g = it / unit_blocks;
          const int j0 = jb * UB, t0 = g * RB;
          Real ar[RB][UB], az[RB][UB], anx[RB][UB], anh[RB][UB];
          {
            Real kr[UB], kz[UB], kn[UB];  // W x0 of the constant columns, the same for every row
            const Real* k0 = &xw(m, j0);
            HPT_UNROLL_ALL
            for (int v = 0; v < UB; ++v) {
              kr[v] = k0[v];
              kz[v] = k0[Hp + v];
              kn[v] = k0[2 * Hp + v];
            }
            HPT_UNROLL_ALL
            for (int t = 0; t < RB; ++t) {
              HPT_UNROLL_ALL
              for (int v = 0; v < UB; ++v) {
                ar[t][v] = kr[v];
                az[t][v] = kz[v];
                anx[t][v] = kn[v];
                anh[t][v] = Real(0);
              }
            }
          }
          // Weight column c of my units: UB consecutive values per gate, offsets multiples of UB
          // (the column after the last is zeros, for PF's read ahead).
          const Real* wc = &wt(m, 0, j0);
          const int stride = 3 * Hp;
          const Real* xc = xh + t0;  // my rows of column c of [x_v; h]
          // PF: my weights of the column live in registers, read a column ahead (the GPU's form);
          // else read in place, the unit loop on vector lanes (the CPU's form). Same products.
          Real cr[UB], cz[UB], cn[UB];
          if constexpr (PF) {
            load_block<UB>(wc, cr);
            load_block<UB>(wc + Hp, cz);
            load_block<UB>(wc + 2 * Hp, cn);
          }
          // Columns [c0, c1) of [x_v; h] into r, z and `an` (W_n x for x, U_n h for h). With reset
          // Before, U_n h waits for r (after the barrier): what it sums here is not read.
          const auto columns = [&](const int c0, const int c1, Real(&an)[RB][UB]) {
            HPT_UNROLL(2)
            for (int c = c0; c < c1; ++c) {
              const Real *pr = cr, *pz = cz, *pn = cn;
              Real nr[UB], nz[UB], nn[UB];
              if constexpr (PF) {
                wc += stride;
                load_block<UB>(wc, nr);
                load_block<UB>(wc + Hp, nz);
                load_block<UB>(wc + 2 * Hp, nn);
              } else {
                pr = wc;
                pz = wc + Hp;
                pn = wc + 2 * Hp;
                wc += stride;
              }
              Real xrow[RB];  // my rows of column c of [x_v; h]
              load_block_shared<RB>(xc, xrow);
              xc += R;
              HPT_UNROLL_ALL
              for (int t = 0; t < RB; ++t) {
                const Real xv = xrow[t];
                HPT_SIMD for (int v = 0; v < UB; ++v) {
                  ar[t][v] += pr[v] * xv;
                  az[t][v] += pz[v] * xv;
                  an[t][v] += pn[v] * xv;
                }
              }
              if constexpr (PF) {
                HPT_UNROLL_ALL
                for (int v = 0; v < UB; ++v) {
                  cr[v] = nr[v];
                  cz[v] = nz[v];
                  cn[v] = nn[v];
                }
              }
            }
          };
          columns(0, V, anx);  // W x of the changing columns
          xc = hcur + t0;      // swap_h: h is not always the continuation of x
          columns(V, W, anh);  // U h
          HPT_UNROLL_ALL
          for (int v = 0; v < UB; ++v) {
            const int j = j0 + v;
            if (j < H) {
              const Real br = p.gru.b_ih(m, j) + p.gru.b_hh(m, j);
              const Real bz = p.gru.b_ih(m, H + j) + p.gru.b_hh(m, H + j);
              const Real bin = p.gru.b_ih(m, 2 * H + j), bhn = p.gru.b_hh(m, 2 * H + j);
              HPT_UNROLL_ALL
              for (int t = 0; t < RB; ++t) {
                const int row = t0 + t;
                const Real r = math::sigmoid(ar[t][v] + br);
                const Real z = math::sigmoid(az[t][v] + bz);
                const Real hj = hcur[j * R + row];
                if (before) {
                  rh[j * R + row] = r * hj;
                  zb[j * R + row] = z;
                  nb[j * R + row] = anx[t][v] + bin + bhn;
                } else {
                  const Real n = math::tanh(anx[t][v] + bin + r * (anh[t][v] + bhn));
                  const Real hnew = (Real(1) - z) * n + z * hj;  // PyTorch: h' = (1 - z) n + z h
                  if (regs) {
                    hreg[t][v] = hnew;
                  } else {
                    hn[j * R + row] = hnew;
                  }
                }
              }
            }
          }
          mine = it;
        });
        team.team_barrier();
        if (before) {  // U_n (r * h) needs every unit's r first
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, items), [&](const int it) {
            const int jb = it % unit_blocks, g = it / unit_blocks;
            const int j0 = jb * UB, t0 = g * RB;
            Real acc[RB][UB];
            HPT_UNROLL_ALL
            for (int t = 0; t < RB; ++t) {
              HPT_UNROLL_ALL
              for (int v = 0; v < UB; ++v) acc[t][v] = Real(0);
            }
            for (int c = 0; c < H; ++c) {
              const Real* wn = &wt(m, V + c, 2 * Hp + j0);
              HPT_UNROLL_ALL
              for (int t = 0; t < RB; ++t) {
                const Real xv = rh[c * R + t0 + t];
                HPT_SIMD for (int v = 0; v < UB; ++v) acc[t][v] += wn[v] * xv;
              }
            }
            HPT_UNROLL_ALL
            for (int v = 0; v < UB; ++v) {
              const int j = j0 + v;
              if (j >= H) continue;
              HPT_UNROLL_ALL
              for (int t = 0; t < RB; ++t) {
                const int row = t0 + t;
                const Real z = zb[j * R + row];
                const Real n = math::tanh(nb[j * R + row] + acc[t][v]);
                hn[j * R + row] = (Real(1) - z) * hcur[j * R + row] + z * n;  // prototype's update
              }
            }
          });
          team.team_barrier();
        }
        if (swap_h) {  // the new h becomes the step's h, the old one the next step's buffer
          Real* const old = hcur;
          hcur = hn;
          hn = old;
        } else if (regs) {  // one item per thread: write my block of the new h
          if (mine >= 0) {
            const int j0 = mine % unit_blocks * UB, t0 = mine / unit_blocks * RB;
            HPT_UNROLL_ALL
            for (int v = 0; v < UB; ++v) {
              if (j0 + v >= H) continue;
              HPT_UNROLL_ALL
              for (int t = 0; t < RB; ++t) hcur[(j0 + v) * R + t0 + t] = hreg[t][v];
            }
          }
        } else {
          Kokkos::parallel_for(Kokkos::TeamVectorRange(team, H * R),
                               [&](const int i) { hcur[i] = hn[i]; });
        }
        if (!swap_h) team.team_barrier();

        // Heads on the new h: the column pairs (A_i h, B_i h), then s_i = mu + sigma eps at once,
        // and (C_0 h, C_1 h), per RBH rows x UB columns; |h|^2 per RBH rows (the last R / RBH
        // items).
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, head_items), [&](const int it) {
          const int qb = it % (head_blocks + 1), g = it / (head_blocks + 1);
          const int t0 = g * RBH;
          if (qb == head_blocks) {
            Real acc[RBH];
            HPT_UNROLL_ALL
            for (int t = 0; t < RBH; ++t) acc[t] = Real(0);
            for (int j = 0; j < H; ++j) {
              const Real* hrow = assume_block_aligned<RBH>(hcur + j * R + t0);
              HPT_UNROLL_ALL
              for (int t = 0; t < RBH; ++t) acc[t] += hrow[t] * hrow[t];
            }
            HPT_UNROLL_ALL
            for (int t = 0; t < RBH; ++t) norm2[t0 + t] = acc[t];
            return;
          }
          const int q0 = qb * HU;
          Real acc[RBH][HU];
          HPT_UNROLL_ALL
          for (int t = 0; t < RBH; ++t) {
            HPT_UNROLL_ALL
            for (int v = 0; v < HU; ++v) acc[t][v] = Real(0);
          }
          const Real* wj = &ht(m, 0, q0);
          const Real* hj = hcur + t0;
          HPT_UNROLL(16)  // 16 rows of head weights in flight (from L2)
          for (int j = 0; j < H; ++j) {
            Real wb[HU];
            const Real* w = wj;
            if constexpr (PF) {
              load_block<HU>(wj, wb);
              w = wb;
            }
            wj += Qp;
            Real hrow[RBH];
            load_block_shared<RBH>(hj, hrow);
            hj += R;
            HPT_UNROLL_ALL
            for (int t = 0; t < RBH; ++t) {
              const Real hv = hrow[t];
              HPT_SIMD for (int v = 0; v < HU; ++v) acc[t][v] += w[v] * hv;
            }
          }
          HPT_UNROLL_ALL
          for (int v = 0; v < HU; v += 2) {
            const int i = (q0 + v) / 2;  // the pair's prior unit, or S for C's pair
            if (i > S) continue;
            HPT_UNROLL_ALL
            for (int t = 0; t < RBH; ++t) {
              const int row = t0 + t;
              if (i == S) {
                csum[row] = acc[t][v];
                csum[R + row] = acc[t][v + 1];
              } else if (row < rows) {
                s[i * R + row] =
                    detail::prior_sample(p, m, i, acc[t][v], acc[t][v + 1], prior_eps[i * R + row]);
              }
            }
          }
        });
        team.team_barrier();

        // Loss head, hidden norm and the path update: one thread per row.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int t) {
          Real cs0 = 0, cs1 = 0;
          for (int i = 0; i < S; ++i) {
            cs0 += p.loss_head_w(m, 0, H + i) * s[i * R + t];
            cs1 += p.loss_head_w(m, 1, H + i) * s[i * R + t];
          }
          const Real eps = Real(detail::RolloutDraws(seed, n0 + t, m, k)(S));
          const Real delta = detail::loss_delta(p, m, csum[t] + cs0, csum[R + t] + cs1, eps);
          const detail::TileRow<Real> x{xh + t, R};
          detail::advance_loss_features(state(t), delta, mode, x, in.norm_mean, in.norm_inv_std,
                                        clamp);
          out.loss_paths(n0 + t, m, k) = math::exp(state(t).log_loss);
          out.hidden_norms(n0 + t, m, k - 1) = math::sqrt(norm2[t]);
        });
        if (k < Y) draw_prior(k + 1);  // read by the heads of step k + 1, after the barrier
        team.team_barrier();
      }

      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int t) {
        for (int j = 0; j < H; ++j) out.final_latents(n0 + t, m, j) = hcur[j * R + t];
      });
    };

    Policy policy(space, league, team_size, 1);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    if (pass == 0) {
      const int fits = policy.team_size_max(body, Kokkos::ParallelForTag());
      HPT_REQUIRE(fits >= 1, "ensemble_rollout_tiled: the kernel does not fit a team");
      if (team_size > fits) {
        team_size = fits;
        continue;
      }
    }
    Kokkos::parallel_for("hpt::ensemble_rollout_tiled", policy, body);
    break;
  }
  detail::mean_hidden_norm(space, out);
}

}  // namespace hpt
