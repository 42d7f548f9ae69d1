#pragma once
// Statistics of the rollout's loss paths (docs/method.md#ensemble-rollout), per horizon k = 0..Y
// over all N*E paths: mean path, 5/50/95 % quantiles, aleatoric and epistemic variance and total
// std of log loss, and the prototype's trace metrics. Every reduction runs in a fixed order (chunks
// of a size fixed by N, each summed by one thread, partial sums combined in order), so no result
// depends on the thread count. Quantiles use an exact radix selection of the order statistics (no
// copy of a horizon's values).
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"

namespace hpt {

constexpr int kRolloutQuantiles = 3;
// Probabilities of the quantile columns of RolloutStatistics::loss_quantiles.
inline double rollout_quantile_probability(int q) {
  return q == 0 ? 0.05 : (q == 1 ? 0.5 : 0.95);
}
// Losses are floored before the log, as the encoder does (l = log(max(L, 1e-12))).
constexpr double kStatisticsMinLoss = 1e-12;

template <class Real, class Mem = MemSpace>
struct RolloutStatistics {
  View1<Real, Mem> mean_loss;       // (Y+1) mean of L over the paths
  View2<Real, Mem> loss_quantiles;  // (Y+1, 3) 5, 50, 95 % of L (numpy's linear interpolation)
  View1<Real, Mem> aleatoric_var;   // (Y+1) mean over members of the variance across scenarios of l
  View1<Real, Mem> epistemic_var;   // (Y+1) variance across members of the member means of l
  View1<Real, Mem> total_std;       // (Y+1) sqrt(aleatoric + epistemic)
  View1<Real, Mem> mean_step_delta;  // (Y+1) mean |L_k - L_{k-1}| over the paths; entry 0 is 0
  View1<Real, Mem> trajectory_var;   // (Y+1) variance of L across the paths
  View1<Real, Mem> smoothness;  // (1) mean over paths and k = 1..Y-1 of |L_{k+1} - 2L_k + L_{k-1}|
  // Work space
  View3<double, Mem> member_moments;  // (Y+1, E, 6) per member: mean L, mean l, M2 L, M2 l, sums
  View1<double, Mem> curvature_sums;  // (Y+1) sum over paths of |L_{k+1} - 2L_k + L_{k-1}|

  RolloutStatistics() = default;
  RolloutStatistics(int members, int horizon)
      : mean_loss("stats.mean_loss", horizon + 1),
        loss_quantiles("stats.loss_quantiles", horizon + 1, kRolloutQuantiles),
        aleatoric_var("stats.aleatoric_var", horizon + 1),
        epistemic_var("stats.epistemic_var", horizon + 1),
        total_std("stats.total_std", horizon + 1),
        mean_step_delta("stats.mean_step_delta", horizon + 1),
        trajectory_var("stats.trajectory_var", horizon + 1),
        smoothness("stats.smoothness", 1),
        member_moments("stats.member_moments", horizon + 1, members, 6),
        curvature_sums("stats.curvature_sums", horizon + 1) {}
};

namespace detail {

// Unsigned keys whose order is the order of the floating-point values (sign-magnitude flip).
template <class Real>
struct OrderKey;

template <>
struct OrderKey<float> {
  using type = std::uint32_t;
  KOKKOS_INLINE_FUNCTION static type to_key(float v) {
    union {
      float f;
      type u;
    } c;
    c.f = v;
    return (c.u & 0x80000000u) ? ~c.u : (c.u | 0x80000000u);
  }
  KOKKOS_INLINE_FUNCTION static float from_key(type k) {
    union {
      float f;
      type u;
    } c;
    c.u = (k & 0x80000000u) ? (k ^ 0x80000000u) : ~k;
    return c.f;
  }
};

template <>
struct OrderKey<double> {
  using type = std::uint64_t;
  KOKKOS_INLINE_FUNCTION static type to_key(double v) {
    union {
      double f;
      type u;
    } c;
    c.f = v;
    const type sign = type(1) << 63;
    return (c.u & sign) ? ~c.u : (c.u | sign);
  }
  KOKKOS_INLINE_FUNCTION static double from_key(type k) {
    union {
      double f;
      type u;
    } c;
    const type sign = type(1) << 63;
    c.u = (k & sign) ? (k ^ sign) : ~k;
    return c.f;
  }
};

// numpy's _lerp: a + (b - a) t, evaluated from b's side when t >= 0.5.
KOKKOS_INLINE_FUNCTION double numpy_lerp(double a, double b, double t) {
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

constexpr int kStatChunks = 64;                        // partial sums per reduction over scenarios
constexpr int kSelectTargets = 2 * kRolloutQuantiles;  // the two order statistics of each quantile
constexpr int kSelectBins = 256;                       // radix select: 8 bits per pass

// Ranks of the order statistics to select and the interpolation weight of each quantile.
struct QuantileTargets {
  int rank[kSelectTargets];
  double gamma[kRolloutQuantiles];
};

template <class Space, class T>
using StatScratch =
    Kokkos::View<T*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

}  // namespace detail

// Fills `stats` from loss_paths (N, E, Y+1). `stats` was built with the same E and Y.
template <class Space, class Real>
HPT_LAUNCHER void compute_rollout_statistics(
    const Space& space, const View3<Real, typename Space::memory_space>& loss_paths,
    const RolloutStatistics<Real, typename Space::memory_space>& stats) {
  const int N = static_cast<int>(loss_paths.extent(0));
  const int E = static_cast<int>(loss_paths.extent(1));
  const int K = static_cast<int>(loss_paths.extent(2));  // Y + 1
  const int Y = K - 1;
  HPT_REQUIRE(N >= 1 && E >= 1 && K >= 1, "rollout statistics: empty loss paths");
  HPT_REQUIRE(int(stats.mean_loss.extent(0)) == K && int(stats.member_moments.extent(1)) == E,
              "rollout statistics: statistics were built for another horizon or member count");
  const double P = double(N) * double(E);

  // 1. Per (horizon, member): two-pass moments of L and l over the scenarios, and the sums of
  //    |first difference| and |second difference| of L.
  {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Scratch = detail::StatScratch<Space, double>;
    const int chunk = (N + detail::kStatChunks - 1) / detail::kStatChunks;
    const int chunks = (N + chunk - 1) / chunk;
    const std::size_t bytes = Scratch::shmem_size(4 * chunks) + Scratch::shmem_size(2);
    const int level = bytes <= std::size_t(Policy::scratch_size_max(0)) ? 0 : 1;
    Policy policy(space, K * E, Kokkos::AUTO);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    const auto moments = stats.member_moments;
    const auto paths = loss_paths;
    Kokkos::parallel_for(
        "hpt::rollout_member_moments", policy,
        KOKKOS_LAMBDA(const typename Policy::member_type& team) {
          const int k = team.league_rank() / E;
          const int m = team.league_rank() % E;
          Scratch partial(team.team_scratch(level), 4 * chunks);
          Scratch means(team.team_scratch(level), 2);
          // Sums are shifted by the first scenario's value: accurate, and exact for equal values.
          const double shift_loss = paths(0, m, k);
          const double shift_log = math::log(math::max(shift_loss, kStatisticsMinLoss));
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, chunks), [&](const int c) {
            double sum_loss = 0, sum_log = 0, sum_delta = 0, sum_curv = 0;
            const int end = (c + 1) * chunk < N ? (c + 1) * chunk : N;
            for (int n = c * chunk; n < end; ++n) {
              const double L = paths(n, m, k);
              sum_loss += L - shift_loss;
              sum_log += math::log(math::max(L, kStatisticsMinLoss)) - shift_log;
              if (k >= 1) sum_delta += math::fabs(L - double(paths(n, m, k - 1)));
              if (k >= 1 && k < Y)
                sum_curv +=
                    math::fabs(double(paths(n, m, k + 1)) - 2.0 * L + double(paths(n, m, k - 1)));
            }
            Kokkos::single(Kokkos::PerThread(team), [&]() {
              partial(4 * c + 0) = sum_loss;
              partial(4 * c + 1) = sum_log;
              partial(4 * c + 2) = sum_delta;
              partial(4 * c + 3) = sum_curv;
            });
          });
          team.team_barrier();
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            double s[4] = {0, 0, 0, 0};
            for (int c = 0; c < chunks; ++c)
              for (int q = 0; q < 4; ++q) s[q] += partial(4 * c + q);
            means(0) = shift_loss + s[0] / N;
            means(1) = shift_log + s[1] / N;
            moments(k, m, 0) = means(0);
            moments(k, m, 1) = means(1);
            moments(k, m, 4) = s[2];
            moments(k, m, 5) = s[3];
          });
          team.team_barrier();
          const double mean_loss = means(0), mean_log = means(1);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, chunks), [&](const int c) {
            double m2_loss = 0, m2_log = 0;
            const int end = (c + 1) * chunk < N ? (c + 1) * chunk : N;
            for (int n = c * chunk; n < end; ++n) {
              const double L = paths(n, m, k);
              const double dl = math::log(math::max(L, kStatisticsMinLoss)) - mean_log;
              m2_loss += (L - mean_loss) * (L - mean_loss);
              m2_log += dl * dl;
            }
            Kokkos::single(Kokkos::PerThread(team), [&]() {
              partial(4 * c + 0) = m2_loss;
              partial(4 * c + 1) = m2_log;
            });
          });
          team.team_barrier();
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            double m2_loss = 0, m2_log = 0;
            for (int c = 0; c < chunks; ++c) {
              m2_loss += partial(4 * c + 0);
              m2_log += partial(4 * c + 1);
            }
            moments(k, m, 2) = m2_loss;
            moments(k, m, 3) = m2_log;
          });
        });
  }

  // 2. Per horizon: combine the members in order (equal counts N, Chan's formula for L's variance).
  {
    const auto moments = stats.member_moments;
    const auto mean_loss = stats.mean_loss;
    const auto alea = stats.aleatoric_var;
    const auto epi = stats.epistemic_var;
    const auto total_std = stats.total_std;
    const auto step_delta = stats.mean_step_delta;
    const auto traj_var = stats.trajectory_var;
    const auto curv = stats.curvature_sums;
    Kokkos::parallel_for(
        "hpt::rollout_statistics_combine", Kokkos::RangePolicy<Space>(space, 0, K),
        KOKKOS_LAMBDA(const int k) {
          // Means of the member means, shifted by member 0's (exact when all members agree).
          double mL = 0, ml = 0;
          for (int m = 0; m < E; ++m) {
            mL += moments(k, m, 0) - moments(k, 0, 0);
            ml += moments(k, m, 1) - moments(k, 0, 1);
          }
          mL = moments(k, 0, 0) + mL / E;
          ml = moments(k, 0, 1) + ml / E;
          double m2L = 0, a = 0, e = 0, d = 0, c = 0;
          for (int m = 0; m < E; ++m) {
            const double dL = moments(k, m, 0) - mL;
            const double dl = moments(k, m, 1) - ml;
            m2L += moments(k, m, 2) + N * dL * dL;
            a += moments(k, m, 3) / N;
            e += dl * dl;
            d += moments(k, m, 4);
            c += moments(k, m, 5);
          }
          a /= E;
          e /= E;
          mean_loss(k) = Real(mL);
          alea(k) = Real(a);
          epi(k) = Real(e);
          total_std(k) = Real(math::sqrt(a + e));
          step_delta(k) = Real(d / P);
          traj_var(k) = Real(m2L / P);
          curv(k) = c;
        });
    const auto smooth = stats.smoothness;
    Kokkos::parallel_for(
        "hpt::rollout_smoothness", Kokkos::RangePolicy<Space>(space, 0, 1),
        KOKKOS_LAMBDA(const int) {
          double sum = 0;
          for (int k = 1; k < Y; ++k) sum += curv(k);
          smooth(0) = Real(Y >= 2 ? sum / (P * double(Y - 1)) : 0.0);
        });
  }

  // 3. Quantiles: the order statistics floor(q (P-1)) and the next one, selected exactly by a radix
  //    select over order-preserving keys (8 bits per pass, histograms counted with integer
  //    atomics).
  {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Key = typename detail::OrderKey<Real>::type;
    using KeyScratch = detail::StatScratch<Space, Key>;
    using IntScratch = detail::StatScratch<Space, int>;
    const int key_bits = 8 * int(sizeof(Key));
    detail::QuantileTargets targets;
    const long count = long(N) * long(E);
    for (int q = 0; q < kRolloutQuantiles; ++q) {
      const double position = rollout_quantile_probability(q) * double(count - 1);
      const double below = std::floor(position);
      targets.rank[2 * q] = int(below);
      targets.rank[2 * q + 1] = int(below) + 1 < count ? int(below) + 1 : int(count - 1);
      targets.gamma[q] = position - below;
    }
    const std::size_t bytes = IntScratch::shmem_size(detail::kSelectTargets * detail::kSelectBins) +
                              IntScratch::shmem_size(detail::kSelectTargets) +
                              KeyScratch::shmem_size(detail::kSelectTargets);
    Policy policy(space, K, Kokkos::AUTO);
    policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
    const auto paths = loss_paths;
    const auto quantiles = stats.loss_quantiles;
    const int total = int(count);
    Kokkos::parallel_for(
        "hpt::rollout_quantiles", policy, KOKKOS_LAMBDA(const typename Policy::member_type& team) {
          const int k = team.league_rank();
          IntScratch hist(team.team_scratch(0), detail::kSelectTargets * detail::kSelectBins);
          IntScratch remaining(team.team_scratch(0), detail::kSelectTargets);
          KeyScratch prefix(team.team_scratch(0), detail::kSelectTargets);
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            for (int t = 0; t < detail::kSelectTargets; ++t) {
              remaining(t) = targets.rank[t];
              prefix(t) = 0;
            }
          });
          for (int shift = key_bits - 8; shift >= 0; shift -= 8) {
            const Key high_mask = shift + 8 < key_bits ? ~Key(0) << (shift + 8) : Key(0);
            Kokkos::parallel_for(
                Kokkos::TeamVectorRange(team, detail::kSelectTargets * detail::kSelectBins),
                [&](const int b) { hist(b) = 0; });
            team.team_barrier();
            Kokkos::parallel_for(Kokkos::TeamVectorRange(team, total), [&](const int i) {
              const Key key = detail::OrderKey<Real>::to_key(paths(i / E, i % E, k));
              const int digit = int((key >> shift) & Key(detail::kSelectBins - 1));
              for (int t = 0; t < detail::kSelectTargets; ++t)
                if (((key ^ prefix(t)) & high_mask) == 0)
                  Kokkos::atomic_add(&hist(t * detail::kSelectBins + digit), 1);
            });
            team.team_barrier();
            Kokkos::parallel_for(
                Kokkos::TeamThreadRange(team, detail::kSelectTargets), [&](const int t) {
                  Kokkos::single(Kokkos::PerThread(team), [&]() {
                    int r = remaining(t);
                    int b = 0;
                    while (b < detail::kSelectBins - 1 && hist(t * detail::kSelectBins + b) <= r)
                      r -= hist(t * detail::kSelectBins + b++);
                    remaining(t) = r;
                    prefix(t) |= Key(b) << shift;
                  });
                });
            team.team_barrier();
          }
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            for (int q = 0; q < kRolloutQuantiles; ++q) {
              const double lo = detail::OrderKey<Real>::from_key(prefix(2 * q));
              const double hi = detail::OrderKey<Real>::from_key(prefix(2 * q + 1));
              quantiles(k, q) = Real(detail::numpy_lerp(lo, hi, targets.gamma[q]));
            }
          });
        });
  }
}

}  // namespace hpt
