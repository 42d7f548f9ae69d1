#pragma once
// `encoder = rich` (docs/method.md#rich-encoder): the 64 raw features of rich_features.hpp, before
// the z-score normaliser, and the per-run LossState that the rollout continues (loss_state.hpp).
// One kernel over the runs, in one of two layouts (RunLayout, telemetry_history.hpp):
//  * team per run: the team copies the run's rings once into team scratch (oldest first, logs
//    taken once), two fused team reductions give every window statistic (sums/min/max, then
//    squared deviations and slope numerators), and the team writes the 64 features;
//  * thread per run: one thread walks the rings (pass 1 over everything, pass 2 over the windows).
// All arithmetic is in double; the features are cast to Real at the end.
//
// Conventions (the enum comments of rich_features.hpp are the spec):
//  * l = log(max(L, 1e-12)); other logs are log(max(x, kTiny)) so a zero never gives -inf.
//  * A window of w steps is the newest min(w, n) entries of an n-entry history.
//  * "Over the last 32" for increases and |deltas| means the newest min(32, n - 1) differences
//    x_k - x_{k-1}; a fraction with no difference is 0.
//  * Slopes are least-squares slopes per step (x = 0, 1, ...), 0 for fewer than 2 entries.
//  * EMA_tau runs over the whole history, oldest to newest, alpha = 1/tau:
//    e_0 = x_0, e_k = e_{k-1} + (x_k - e_{k-1}) / tau.
//  * A missing value (empty ring, no validation loss, fresh run) gives 0, and every feature that is
//    not finite after the cast to Real is replaced by 0: nothing NaN or Inf leaves the encoder.
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/multi_reducer.hpp"
#include "kernels/rich_features.hpp"
#include "kernels/telemetry_history.hpp"

namespace hpt {

namespace rich {

constexpr double kLossFloor = 1e-12;            // l = log(max(L, kLossFloor)) (rich_features.hpp)
constexpr double kTiny = 1e-30;                 // floor of every other logarithm
constexpr int kScratchLevel0Bytes = 32 * 1024;  // larger histories go to level-1 scratch

// Window statistics of one run (in the team layout identical on every thread of the team).
struct RichStats {
  int n, ng, nu, nc, nw;  // entries of the loss, gradient, update, cosine and weight rings
  // loss (log)
  double lt, lprev, lfirst;
  double mean8, mean32, mean128, std8, std32, std128, slope8, slope32, slope128;
  double ema4, ema16, ema64, best, min128, max128, inc_frac32, abs_delta32;
  // gradient: log unless noted
  double g_t, lg_t, gmean8, gmean32, gstd8, gstd32, gslope8, gslope32, gema16_linear;
  double gmin32, gmax32, gcv32_linear, ginc_frac32;
  // update, cosine, weight
  double lu_t, uslope8, uema16_linear, c_t, cmean8, cmean32, lw_t, wslope32;
};

KOKKOS_INLINE_FUNCTION double safe_log(double x, double floor) {
  return math::log(math::max(x, floor));
}

KOKKOS_INLINE_FUNCTION int window(int w, int n) {
  return n < w ? n : w;
}

// Least-squares slope of a window of w entries from its numerator sum (x - xbar)(y - ybar).
KOKKOS_INLINE_FUNCTION double slope(double numerator, int w) {
  if (w < 2) return 0.0;
  const double sxx = double(w) * (double(w) * double(w) - 1.0) / 12.0;
  return numerator / sxx;
}

// Position of an entry of age `age` inside a window of w entries minus the mean position.
KOKKOS_INLINE_FUNCTION double centred_x(int age, int w) {
  return double(w - 1 - age) - 0.5 * double(w - 1);
}

// Team scratch of one run: the loss ring as log loss, and of the other rings (oldest first)
// linear and log gradient norm, linear and log update norm, cosine, log weight norm; then the
// run's scalar row.
template <class Space>
struct Scratch {
  using View = Kokkos::View<double*, typename Space::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int kOtherArrays = 6;
  static std::size_t doubles(int loss_capacity, int other_capacity) {
    return std::size_t(loss_capacity) + kOtherArrays * std::size_t(other_capacity) +
           telemetry::kScalarCount;
  }
  // The run's row of the scalar table, after the rings (features read it many times).
  KOKKOS_INLINE_FUNCTION static double* scalars(double* buf, int loss_capacity,
                                                int other_capacity) {
    return buf + loss_capacity + kOtherArrays * other_capacity;
  }
  static std::size_t bytes(int loss_capacity, int other_capacity) {
    return View::shmem_size(doubles(loss_capacity, other_capacity));
  }
  static int level(int loss_capacity, int other_capacity) {
    return bytes(loss_capacity, other_capacity) <= std::size_t(kScratchLevel0Bytes) ? 0 : 1;
  }
};

// Copies run r's rings into scratch (`buf`, Scratch::doubles of them) and computes RichStats.
// Called by the whole team. The two passes walk the histories by age (0 = newest) with each thread
// taking every team_size-th age, so the EMA weights (1 - alpha)^age advance by one multiplication.
template <class Member, class Real, class Mem>
KOKKOS_INLINE_FUNCTION RichStats team_rich_stats(const Member& team,
                                                 const TelemetryHistory<Real, Mem>& h, int r,
                                                 double* buf) {
  RichStats s;
  s.n = h.count(r, telemetry::kLossSeries);
  s.ng = h.count(r, telemetry::kGradSeries);
  s.nu = h.count(r, telemetry::kUpdateSeries);
  s.nc = h.count(r, telemetry::kCosSeries);
  s.nw = h.count(r, telemetry::kWeightSeries);
  const int oc = h.other_capacity();
  double* L = buf;
  double* G = buf + h.loss_capacity();
  double* LG = G + oc;
  double* U = LG + oc;
  double* LU = U + oc;
  double* C = LU + oc;
  double* LW = C + oc;
  double* S = LW + oc;

  // ---- load: one coalesced read of every ring, logarithms taken once
  const int n = s.n, ng = s.ng, nu = s.nu, nc = s.nc, nw = s.nw;
  const int longest = math::max(math::max(n, ng), math::max(math::max(nu, nc), nw));
  Kokkos::parallel_for(
      Kokkos::TeamThreadRange(team, math::max(longest, int(telemetry::kScalarCount))), [&](int i) {
        if (i < telemetry::kScalarCount) S[i] = h.scalars(r, i);
        if (i < n) L[i] = safe_log(double(h.entry(r, telemetry::kLossSeries, i)), kLossFloor);
        if (i < ng) {
          G[i] = double(h.entry(r, telemetry::kGradSeries, i));
          LG[i] = safe_log(G[i], kTiny);
        }
        if (i < nu) {
          U[i] = double(h.entry(r, telemetry::kUpdateSeries, i));
          LU[i] = safe_log(U[i], kTiny);
        }
        if (i < nc) C[i] = double(h.entry(r, telemetry::kCosSeries, i));
        if (i < nw) LW[i] = safe_log(double(h.entry(r, telemetry::kWeightSeries, i)), kTiny);
      });
  team.team_barrier();

  const int rank = team.team_rank(), stride = team.team_size();
  // ---- pass 1: window sums, EMAs, counts, min/max
  enum A : int {
    kS8,
    kS32,
    kS128,
    kE4,
    kE16,
    kE64,
    kInc,
    kAbsD,
    kGS8,
    kGS32,
    kGLin32,
    kGE16,
    kGInc,
    kUS8,
    kUE16,
    kCS8,
    kCS32,
    kWS32,  // sums
    kMinAll,
    kMin128,
    kGMin32,  // mins
    kMax128,
    kGMax32  // maxs
  };
  using Pass1 = reduce::MultiReducer<18, 3, 2>;
  typename Pass1::value_type a;
  const Pass1 pass1(a);
  pass1.init(a);
  {
    // EMA_tau weight of the entry of age k among n: alpha (1-alpha)^k, and (1-alpha)^k for the
    // oldest (k = n - 1). d_tau = (1-alpha)^age of this thread's current age.
    const double keep4 = math::log(0.75), keep16 = math::log(15.0 / 16.0);
    const double keep64 = math::log(63.0 / 64.0);
    double d4 = math::exp(keep4 * rank), d16 = math::exp(keep16 * rank);
    double d64 = math::exp(keep64 * rank);
    const double m4 = math::exp(keep4 * stride), m16 = math::exp(keep16 * stride);
    const double m64 = math::exp(keep64 * stride);
    for (int age = rank; age < longest; age += stride) {
      if (age < n) {
        const int i = n - 1 - age;
        const double l = L[i];
        if (age < 8) a.v[kS8] += l;
        if (age < 32) a.v[kS32] += l;
        if (age < 128) a.v[kS128] += l;
        const bool oldest = i == 0;
        a.v[kE4] += (oldest ? 1.0 : 0.25) * d4 * l;
        a.v[kE16] += (oldest ? 1.0 : 1.0 / 16.0) * d16 * l;
        a.v[kE64] += (oldest ? 1.0 : 1.0 / 64.0) * d64 * l;
        if (i >= 1 && age < 32) {
          const double d = l - L[i - 1];
          a.v[kInc] += d > 0.0 ? 1.0 : 0.0;
          a.v[kAbsD] += math::fabs(d);
        }
        if (l < a.v[kMinAll]) a.v[kMinAll] = l;
        if (age < 128) {
          if (l < a.v[kMin128]) a.v[kMin128] = l;
          if (l > a.v[kMax128]) a.v[kMax128] = l;
        }
      }
      if (age < ng) {
        const int i = ng - 1 - age;
        const double g = G[i], lg = LG[i];
        if (age < 8) a.v[kGS8] += lg;
        if (age < 32) {
          a.v[kGS32] += lg;
          a.v[kGLin32] += g;
          if (lg < a.v[kGMin32]) a.v[kGMin32] = lg;
          if (lg > a.v[kGMax32]) a.v[kGMax32] = lg;
          if (i >= 1) a.v[kGInc] += g > G[i - 1] ? 1.0 : 0.0;
        }
        a.v[kGE16] += (i == 0 ? 1.0 : 1.0 / 16.0) * d16 * g;
      }
      if (age < nu) {
        const int i = nu - 1 - age;
        if (age < 8) a.v[kUS8] += LU[i];
        a.v[kUE16] += (i == 0 ? 1.0 : 1.0 / 16.0) * d16 * U[i];
      }
      if (age < nc) {
        const double c = C[nc - 1 - age];
        if (age < 8) a.v[kCS8] += c;
        if (age < 32) a.v[kCS32] += c;
      }
      if (age < nw && age < 32) a.v[kWS32] += LW[nw - 1 - age];
      d4 *= m4;
      d16 *= m16;
      d64 *= m64;
    }
  }
  team.team_reduce(pass1);

  const int w8 = window(8, n), w32 = window(32, n), w128 = window(128, n);
  const int gw8 = window(8, ng), gw32 = window(32, ng);
  const int uw8 = window(8, nu), cw8 = window(8, nc), cw32 = window(32, nc), ww32 = window(32, nw);
  const int deltas32 = window(32, n - 1), gdeltas32 = window(32, ng - 1);
  auto ratio = [](double num, int den) { return den > 0 ? num / double(den) : 0.0; };
  s.mean8 = ratio(a.v[kS8], w8);
  s.mean32 = ratio(a.v[kS32], w32);
  s.mean128 = ratio(a.v[kS128], w128);
  s.gmean8 = ratio(a.v[kGS8], gw8);
  s.gmean32 = ratio(a.v[kGS32], gw32);
  const double glin_mean32 = ratio(a.v[kGLin32], gw32);
  const double umean8 = ratio(a.v[kUS8], uw8);
  const double wmean32 = ratio(a.v[kWS32], ww32);

  // ---- pass 2: squared deviations and slope numerators around the window means (windows only)
  enum B : int {
    kQ8,
    kQ32,
    kQ128,
    kP8,
    kP32,
    kP128,
    kGQ8,
    kGQ32,
    kGP8,
    kGP32,
    kGLQ32,
    kUP8,
    kWP32
  };
  using Pass2 = reduce::MultiReducer<13, 0, 0>;
  typename Pass2::value_type b;
  const Pass2 pass2(b);
  pass2.init(b);
  const double m8 = s.mean8, m32 = s.mean32, m128 = s.mean128, gm8 = s.gmean8, gm32 = s.gmean32;
  for (int age = rank; age < 128; age += stride) {
    if (age < n) {
      const double l = L[n - 1 - age];
      if (age < 8) {
        b.v[kQ8] += (l - m8) * (l - m8);
        b.v[kP8] += centred_x(age, w8) * (l - m8);
      }
      if (age < 32) {
        b.v[kQ32] += (l - m32) * (l - m32);
        b.v[kP32] += centred_x(age, w32) * (l - m32);
      }
      b.v[kQ128] += (l - m128) * (l - m128);
      b.v[kP128] += centred_x(age, w128) * (l - m128);
    }
    if (age < ng && age < 32) {
      const int i = ng - 1 - age;
      const double lg = LG[i];
      if (age < 8) {
        b.v[kGQ8] += (lg - gm8) * (lg - gm8);
        b.v[kGP8] += centred_x(age, gw8) * (lg - gm8);
      }
      b.v[kGQ32] += (lg - gm32) * (lg - gm32);
      b.v[kGP32] += centred_x(age, gw32) * (lg - gm32);
      b.v[kGLQ32] += (G[i] - glin_mean32) * (G[i] - glin_mean32);
    }
    if (age < nu && age < 8) b.v[kUP8] += centred_x(age, uw8) * (LU[nu - 1 - age] - umean8);
    if (age < nw && age < 32) b.v[kWP32] += centred_x(age, ww32) * (LW[nw - 1 - age] - wmean32);
  }
  team.team_reduce(pass2);

  // ---- loss
  s.lt = n > 0 ? L[n - 1] : 0.0;
  s.lprev = n > 1 ? L[n - 2] : s.lt;
  s.lfirst = n > 0 ? L[0] : 0.0;
  s.std8 = math::sqrt(ratio(b.v[kQ8], w8));
  s.std32 = math::sqrt(ratio(b.v[kQ32], w32));
  s.std128 = math::sqrt(ratio(b.v[kQ128], w128));
  s.slope8 = slope(b.v[kP8], w8);
  s.slope32 = slope(b.v[kP32], w32);
  s.slope128 = slope(b.v[kP128], w128);
  s.ema4 = n > 0 ? a.v[kE4] : 0.0;
  s.ema16 = n > 0 ? a.v[kE16] : 0.0;
  s.ema64 = n > 0 ? a.v[kE64] : 0.0;
  s.best = n > 0 ? a.v[kMinAll] : 0.0;
  s.min128 = n > 0 ? a.v[kMin128] : 0.0;
  s.max128 = n > 0 ? a.v[kMax128] : 0.0;
  s.inc_frac32 = ratio(a.v[kInc], deltas32);
  s.abs_delta32 = ratio(a.v[kAbsD], deltas32);
  // ---- gradient
  s.g_t = ng > 0 ? G[ng - 1] : 0.0;
  s.lg_t = ng > 0 ? LG[ng - 1] : 0.0;
  s.gstd8 = math::sqrt(ratio(b.v[kGQ8], gw8));
  s.gstd32 = math::sqrt(ratio(b.v[kGQ32], gw32));
  s.gslope8 = slope(b.v[kGP8], gw8);
  s.gslope32 = slope(b.v[kGP32], gw32);
  s.gema16_linear = ng > 0 ? a.v[kGE16] : 0.0;
  s.gmin32 = ng > 0 ? a.v[kGMin32] : 0.0;
  s.gmax32 = ng > 0 ? a.v[kGMax32] : 0.0;
  s.gcv32_linear =
      ng > 0 ? math::sqrt(ratio(b.v[kGLQ32], gw32)) / math::max(glin_mean32, kTiny) : 0.0;
  s.ginc_frac32 = ratio(a.v[kGInc], gdeltas32);
  // ---- update, cosine, weight
  s.lu_t = nu > 0 ? LU[nu - 1] : 0.0;
  s.uslope8 = slope(b.v[kUP8], uw8);
  s.uema16_linear = nu > 0 ? a.v[kUE16] : 0.0;
  s.c_t = nc > 0 ? C[nc - 1] : 0.0;
  s.cmean8 = ratio(a.v[kCS8], cw8);
  s.cmean32 = ratio(a.v[kCS32], cw32);
  s.lw_t = nw > 0 ? LW[nw - 1] : 0.0;
  s.wslope32 = slope(b.v[kWP32], ww32);
  return s;
}

// Raw value of feature f (before the normaliser), as documented in rich_features.hpp, from the
// run's statistics and its row S of the scalar table.
KOKKOS_INLINE_FUNCTION double raw_feature(int f, const RichStats& s, const double* S) {
  namespace tm = telemetry;                      // its column names overlap the feature names
  const bool fresh = S[tm::kRecordCount] < 1.0;  // no record: every scalar is unknown
  const double val_count = S[tm::kValCount];
  auto lval = [&]() { return safe_log(S[tm::kValLoss], kLossFloor); };
  const double lr = S[tm::kLr];
  const double m_mean = S[tm::kMomentMean];
  const double v_mean = S[tm::kVarianceMean];
  const int phase = int(S[tm::kPhase]);
  const bool has_l = s.n > 0, has_g = s.ng > 0;
  switch (f) {
    // ---- loss group
    case kLogLoss:
      return s.lt;  // l_t
    case kLossMean8:
      return s.mean8;  // mean l, newest 8
    case kLossMean32:
      return s.mean32;  // mean l, newest 32
    case kLossMean128:
      return s.mean128;  // mean l, newest 128
    case kLossStd8:
      return s.std8;  // population std l, newest 8
    case kLossStd32:
      return s.std32;  // ... newest 32
    case kLossStd128:
      return s.std128;  // ... newest 128
    case kLossSlope8:
      return s.slope8;  // LS slope of l, newest 8
    case kLossSlope32:
      return s.slope32;  // ... newest 32
    case kLossSlope128:
      return s.slope128;  // ... newest 128
    case kLossEmaGap4:
      return has_l ? s.lt - s.ema4 : 0.0;  // l_t - EMA_4(l)
    case kLossEmaGap16:
      return has_l ? s.lt - s.ema16 : 0.0;  // l_t - EMA_16(l)
    case kLossEmaGap64:
      return has_l ? s.lt - s.ema64 : 0.0;  // l_t - EMA_64(l)
    case kLossBestGap:
      return has_l ? s.lt - s.best : 0.0;  // l_t - min l (>= 0)
    case kLossIncreaseFrac32:
      return s.inc_frac32;  // share of l_k > l_{k-1}, last 32
    case kLossLastDelta:
      return s.lt - s.lprev;  // l_t - l_{t-1} (0 if n < 2)
    case kLossAbsDeltaMean32:
      return s.abs_delta32;  // mean |l_k - l_{k-1}|, last 32
    case kLossZ32:
      return has_l ? (s.lt - s.mean32) / (s.std32 + 1e-8) : 0.0;
    case kLossRange128:
      return s.max128 - s.min128;  // max - min l, newest 128
    case kLossCurvature:
      return s.slope8 - s.slope32;  // slope8 - slope32
    case kLossProgress:
      return s.lfirst - s.lt;  // l_oldest - l_t
    case kValLogLoss:
      return val_count >= 1.0 ? lval() : 0.0;  // log newest validation loss
    case kGenGap:
      return val_count >= 1.0 && has_l ? lval() - s.ema16 : 0.0;  // log val - EMA_16(l)
    case kValTrend:                                               // log val - log previous val
      return val_count >= 2.0 ? lval() - safe_log(S[tm::kValLossPrev], kLossFloor) : 0.0;
    // ---- gradient group
    case kLogGrad:
      return s.lg_t;  // log g_t
    case kGradMean8:
      return s.gmean8;  // mean log g, newest 8
    case kGradMean32:
      return s.gmean32;  // mean log g, newest 32
    case kGradStd8:
      return s.gstd8;  // std log g, newest 8
    case kGradStd32:
      return s.gstd32;  // std log g, newest 32
    case kGradSlope8:
      return s.gslope8;  // LS slope log g, newest 8
    case kGradSlope32:
      return s.gslope32;   // LS slope log g, newest 32
    case kGradEmaRatio16:  // log g_t - log EMA_16(g)
      return has_g ? s.lg_t - safe_log(s.gema16_linear, kTiny) : 0.0;
    case kGradMaxGap32:
      return has_g ? s.gmax32 - s.lg_t : 0.0;  // max log g (32) - log g_t
    case kGradMinGap32:
      return has_g ? s.lg_t - s.gmin32 : 0.0;  // log g_t - min log g (32)
    case kGradCv32:
      return s.gcv32_linear;  // std g / mean g, newest 32
    case kGradIncreaseFrac32:
      return s.ginc_frac32;  // share of g_k > g_{k-1}, last 32
    case kGradTensorStd:
      return S[tm::kGradTensorLogStd];  // std log per-tensor norms
    case kGradTensorRange:
      return S[tm::kGradTensorLogRange];  // range log per-tensor norms
    case kLogGradOverLoss:
      return has_g && has_l ? s.lg_t - s.lt : 0.0;  // log g_t - l_t
    case kLogLrGrad:
      return has_g ? safe_log(lr * s.g_t, kTiny) : 0.0;  // log(lr g_t)
    // ---- optimizer / update group
    case kLogLr:
      return fresh ? 0.0 : safe_log(lr, kTiny);  // log lr
    case kLogUpdate:
      return s.lu_t;            // log u_t
    case kLogUpdateOverWeight:  // log(u_t / weight norm)
      return s.nu > 0 && s.nw > 0 ? s.lu_t - s.lw_t : 0.0;
    case kLogWeight:
      return s.lw_t;  // log weight norm
    case kUpdateCos:
      return s.c_t;  // newest update cosine
    case kUpdateCosMean8:
      return s.cmean8;  // mean cosine, newest 8
    case kUpdateCosMean32:
      return s.cmean32;  // mean cosine, newest 32
    case kUpdateSlope8:
      return s.uslope8;      // LS slope log u, newest 8
    case kUpdateEmaRatio16:  // log u_t - log EMA_16(u)
      return s.nu > 0 ? s.lu_t - safe_log(s.uema16_linear, kTiny) : 0.0;
    case kLogMomentMean:
      return fresh ? 0.0 : safe_log(m_mean, kTiny);  // log mean |m|
    case kLogVarianceMean:
      return v_mean > 0.0 ? math::log(v_mean) : 0.0;  // log mean v (0: SGD)
    case kMomentSnr:  // log(mean|m| / (sqrt(mean v) + 1e-8)), 0 without a second moment
      return v_mean > 0.0 ? safe_log(m_mean, kTiny) - math::log(math::sqrt(v_mean) + 1e-8) : 0.0;
    case kBeta1Pow:
      return S[tm::kBeta1Pow];  // beta1^t
    case kBeta2Pow:
      return S[tm::kBeta2Pow];  // beta2^t
    case kWeightSlope32:
      return s.wslope32;  // LS slope log weight, newest 32
    case kLogMomentStd:   // log(std |m| + 1e-12)
      return fresh ? 0.0 : safe_log(S[tm::kMomentStd] + 1e-12, kTiny);
    // ---- context group
    case kPhaseFull:
      return phase == tm::kFull ? 1.0 : 0.0;  // one-hot phase (Warmup: none)
    case kPhasePredict:
      return phase == tm::kPredict ? 1.0 : 0.0;
    case kPhaseCorrect:
      return phase == tm::kCorrect ? 1.0 : 0.0;
    case kStepsInPhase:
      return S[tm::kStepsInPhase] / 100.0;  // steps in phase / 100
    case kLogStep:
      return math::log10(math::max(S[tm::kStep] + 1.0, 1.0));  // log10(step+1)
    case kPredictedFrac:
      return S[tm::kPredictedFrac];  // fraction of steps predicted
    case kForecastError:             // last normalised forecast error
      return S[tm::kHasForecastError] > 0.0 ? S[tm::kForecastError] : 0.0;
    case kValAvailable:
      return val_count >= 1.0 ? 1.0 : 0.0;  // validation loss recorded
    default:
      return 0.0;
  }
}

// Finite value or 0, after the cast to Real (a finite double can overflow a float).
template <class Real>
KOKKOS_INLINE_FUNCTION Real finite_or_zero(double v) {
  const Real x = Real(v);
  return math::isfinite(x) ? x : Real(0);
}

// `tail` holds the newest min(kLossWindow, n) log losses, oldest first.
template <class Real>
KOKKOS_INLINE_FUNCTION void fill_loss_state(const RichStats& s, const double* tail,
                                            LossState<Real>& o) {
  o.log_loss = finite_or_zero<Real>(s.lt);
  o.ema4 = finite_or_zero<Real>(s.ema4);
  o.ema16 = finite_or_zero<Real>(s.ema16);
  o.ema64 = finite_or_zero<Real>(s.ema64);
  o.best = finite_or_zero<Real>(s.best);
  o.first = finite_or_zero<Real>(s.lfirst);
  o.mean32 = finite_or_zero<Real>(s.mean32);
  o.std32 = finite_or_zero<Real>(s.std32);
  const int real = window(kLossWindow, s.n);
  o.count = real;
  const int empty =
      kLossWindow - real;  // unused entries at the front (window[kLossWindow-1] = l_t)
  for (int k = 0; k < kLossWindow; ++k)
    o.window[k] = k >= empty ? finite_or_zero<Real>(tail[k - empty]) : Real(0);
}

// Calls f(i, load(i)) for i = begin, ..., end - 1 in order, issuing the loads kPrefetch at a time
// so one thread has several memory requests in flight (the thread-per-run walk is latency-bound).
constexpr int kPrefetch = 8;
template <class Load, class F>
KOKKOS_INLINE_FUNCTION void for_each_prefetched(int begin, int end, const Load& load, const F& f) {
  double v[kPrefetch];
  for (int i0 = begin; i0 < end; i0 += kPrefetch) {
    const int m = end - i0 < kPrefetch ? end - i0 : kPrefetch;
    for (int k = 0; k < kPrefetch; ++k) v[k] = load(k < m ? i0 + k : i0);  // i0 is valid
    for (int k = 0; k < kPrefetch; ++k)
      if (k < m) f(i0 + k, v[k]);
  }
}

// Statistics of run r computed by one thread straight from the rings: pass 1 oldest to newest over
// every entry (EMAs by their recursion), pass 2 over the newest windows only. For many runs, one
// thread per run keeps every thread busy without team barriers or reductions. `tail` receives the
// newest min(kLossWindow, n) log losses, oldest first.
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION RichStats thread_rich_stats(const TelemetryHistory<Real, Mem>& h, int r,
                                                   double* tail) {
  namespace tm = telemetry;
  RichStats s;
  s.n = h.count(r, tm::kLossSeries);
  s.ng = h.count(r, tm::kGradSeries);
  s.nu = h.count(r, tm::kUpdateSeries);
  s.nc = h.count(r, tm::kCosSeries);
  s.nw = h.count(r, tm::kWeightSeries);
  const int n = s.n, ng = s.ng, nu = s.nu, nc = s.nc, nw = s.nw;
  const int lcap = h.loss_capacity(), ocap = h.other_capacity();
  // Chronological entry i of a ring whose oldest entry is in slot `first`.
  auto at = [](int first, int i, int cap) {
    const int k = first + i;
    return k >= cap ? k - cap : k;
  };
  auto oldest = [&](int series, int count, int cap) {
    return (h.head(r, series) - count + cap) % cap;
  };
  const int l0 = oldest(tm::kLossSeries, n, lcap), g0 = oldest(tm::kGradSeries, ng, ocap);
  const int u0 = oldest(tm::kUpdateSeries, nu, ocap), c0 = oldest(tm::kCosSeries, nc, ocap);
  const int w0 = oldest(tm::kWeightSeries, nw, ocap);
  auto loss = [&](int i) { return double(h.loss(r, at(l0, i, lcap))); };
  auto grad = [&](int i) { return double(h.other(r, tm::kGradSeries - 1, at(g0, i, ocap))); };
  auto update = [&](int i) { return double(h.other(r, tm::kUpdateSeries - 1, at(u0, i, ocap))); };
  auto cosine = [&](int i) { return double(h.other(r, tm::kCosSeries - 1, at(c0, i, ocap))); };
  auto weight = [&](int i) { return double(h.other(r, tm::kWeightSeries - 1, at(w0, i, ocap))); };
  const int w8 = window(8, n), w32 = window(32, n), w128 = window(128, n);
  const int gw8 = window(8, ng), gw32 = window(32, ng);
  const int uw8 = window(8, nu), cw8 = window(8, nc), cw32 = window(32, nc), ww32 = window(32, nw);
  auto ratio = [](double num, int den) { return den > 0 ? num / double(den) : 0.0; };

  // ---- loss
  double s8 = 0, s32 = 0, s128 = 0, inc = 0, absd = 0, prev = 0.0;
  double e4 = 0, e16 = 0, e64 = 0, best = reduce::infinity(), lo = reduce::infinity();
  double hi = -reduce::infinity();
  const int tail_real = window(kLossWindow, n);
  for_each_prefetched(0, n, loss, [&](int i, double raw) {
    const double l = safe_log(raw, kLossFloor);
    const int age = n - 1 - i;
    if (i == 0) {
      e4 = e16 = e64 = l;
      s.lfirst = l;
    } else {
      e4 += (l - e4) / 4.0;
      e16 += (l - e16) / 16.0;
      e64 += (l - e64) / 64.0;
      if (age < 32) {
        inc += l > prev ? 1.0 : 0.0;
        absd += math::fabs(l - prev);
      }
    }
    if (age < 8) s8 += l;
    if (age < 32) s32 += l;
    if (age < 128) {
      s128 += l;
      if (l < lo) lo = l;
      if (l > hi) hi = l;
    }
    if (l < best) best = l;
    if (age < tail_real) tail[tail_real - 1 - age] = l;
    if (age == 1) s.lprev = l;
    prev = l;
  });
  s.lt = n > 0 ? prev : 0.0;
  if (n < 2) s.lprev = s.lt;
  if (n == 0) s.lfirst = 0.0;
  s.mean8 = ratio(s8, w8);
  s.mean32 = ratio(s32, w32);
  s.mean128 = ratio(s128, w128);
  double q8 = 0, q32 = 0, q128 = 0, p8 = 0, p32 = 0, p128 = 0;
  for_each_prefetched(n - w128, n, loss, [&](int i, double raw) {
    const double l = safe_log(raw, kLossFloor);
    const int age = n - 1 - i;
    if (age < 8) {
      q8 += (l - s.mean8) * (l - s.mean8);
      p8 += centred_x(age, w8) * (l - s.mean8);
    }
    if (age < 32) {
      q32 += (l - s.mean32) * (l - s.mean32);
      p32 += centred_x(age, w32) * (l - s.mean32);
    }
    q128 += (l - s.mean128) * (l - s.mean128);
    p128 += centred_x(age, w128) * (l - s.mean128);
  });
  s.std8 = math::sqrt(ratio(q8, w8));
  s.std32 = math::sqrt(ratio(q32, w32));
  s.std128 = math::sqrt(ratio(q128, w128));
  s.slope8 = slope(p8, w8);
  s.slope32 = slope(p32, w32);
  s.slope128 = slope(p128, w128);
  s.ema4 = e4;
  s.ema16 = e16;
  s.ema64 = e64;
  s.best = n > 0 ? best : 0.0;
  s.min128 = n > 0 ? lo : 0.0;
  s.max128 = n > 0 ? hi : 0.0;
  s.inc_frac32 = ratio(inc, window(32, n - 1));
  s.abs_delta32 = ratio(absd, window(32, n - 1));

  // ---- gradient
  double gs8 = 0, gs32 = 0, glin32 = 0, ge16 = 0, ginc = 0, gprev = 0.0;
  double gmin = reduce::infinity(), gmax = -reduce::infinity();
  for_each_prefetched(0, ng, grad, [&](int i, double g) {
    const double lg = safe_log(g, kTiny);
    const int age = ng - 1 - i;
    ge16 = i == 0 ? g : ge16 + (g - ge16) / 16.0;
    if (age < 8) gs8 += lg;
    if (age < 32) {
      gs32 += lg;
      glin32 += g;
      if (lg < gmin) gmin = lg;
      if (lg > gmax) gmax = lg;
      if (i >= 1) ginc += g > gprev ? 1.0 : 0.0;
    }
    gprev = g;
  });
  s.g_t = ng > 0 ? gprev : 0.0;
  s.lg_t = ng > 0 ? safe_log(gprev, kTiny) : 0.0;
  s.gmean8 = ratio(gs8, gw8);
  s.gmean32 = ratio(gs32, gw32);
  const double glin_mean32 = ratio(glin32, gw32);
  double gq8 = 0, gq32 = 0, gp8 = 0, gp32 = 0, glq32 = 0;
  for_each_prefetched(ng - gw32, ng, grad, [&](int i, double g) {
    const double lg = safe_log(g, kTiny);
    const int age = ng - 1 - i;
    if (age < 8) {
      gq8 += (lg - s.gmean8) * (lg - s.gmean8);
      gp8 += centred_x(age, gw8) * (lg - s.gmean8);
    }
    gq32 += (lg - s.gmean32) * (lg - s.gmean32);
    gp32 += centred_x(age, gw32) * (lg - s.gmean32);
    glq32 += (g - glin_mean32) * (g - glin_mean32);
  });
  s.gstd8 = math::sqrt(ratio(gq8, gw8));
  s.gstd32 = math::sqrt(ratio(gq32, gw32));
  s.gslope8 = slope(gp8, gw8);
  s.gslope32 = slope(gp32, gw32);
  s.gema16_linear = ng > 0 ? ge16 : 0.0;
  s.gmin32 = ng > 0 ? gmin : 0.0;
  s.gmax32 = ng > 0 ? gmax : 0.0;
  s.gcv32_linear = ng > 0 ? math::sqrt(ratio(glq32, gw32)) / math::max(glin_mean32, kTiny) : 0.0;
  s.ginc_frac32 = ratio(ginc, window(32, ng - 1));

  // ---- update norm: EMA over everything, log mean and slope over the newest 8
  double ue16 = 0, us8 = 0, ulast = 0;
  for_each_prefetched(0, nu, update, [&](int i, double u) {
    ue16 = i == 0 ? u : ue16 + (u - ue16) / 16.0;
    if (nu - 1 - i < 8) us8 += safe_log(u, kTiny);
    ulast = u;
  });
  const double umean8 = ratio(us8, uw8);
  double up8 = 0;
  for_each_prefetched(nu - uw8, nu, update, [&](int i, double u) {
    up8 += centred_x(nu - 1 - i, uw8) * (safe_log(u, kTiny) - umean8);
  });
  s.lu_t = nu > 0 ? safe_log(ulast, kTiny) : 0.0;
  s.uslope8 = slope(up8, uw8);
  s.uema16_linear = nu > 0 ? ue16 : 0.0;

  // ---- cosine: newest windows only
  double cs8 = 0, cs32 = 0, clast = 0;
  for_each_prefetched(nc - cw32, nc, cosine, [&](int i, double c) {
    if (nc - 1 - i < 8) cs8 += c;
    cs32 += c;
    clast = c;
  });
  s.c_t = nc > 0 ? clast : 0.0;
  s.cmean8 = ratio(cs8, cw8);
  s.cmean32 = ratio(cs32, cw32);

  // ---- weight norm: log mean and slope over the newest 32
  double ws32 = 0, wlast = 0;
  for_each_prefetched(nw - ww32, nw, weight, [&](int, double w) {
    ws32 += safe_log(w, kTiny);
    wlast = w;
  });
  const double wmean32 = ratio(ws32, ww32);
  double wp32 = 0;
  for_each_prefetched(nw - ww32, nw, weight, [&](int i, double w) {
    wp32 += centred_x(nw - 1 - i, ww32) * (safe_log(w, kTiny) - wmean32);
  });
  s.lw_t = nw > 0 ? safe_log(wlast, kTiny) : 0.0;
  s.wslope32 = slope(wp32, ww32);
  return s;
}

// One launch: raw features (if raw is allocated) and loss states (if states is allocated).
template <class Space, class Real>
HPT_LAUNCHER void encode_rich_impl(
    const Space& space, const TelemetryHistory<Real, typename Space::memory_space>& history,
    const View2<Real, typename Space::memory_space>& raw,
    const View1<LossState<Real>, typename Space::memory_space>& states,
    const EncodeLaunch& launch) {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using ScratchT = Scratch<Space>;
  const auto h = history;
  const auto x = raw;
  const auto st = states;
  const bool write_raw = raw.extent(0) > 0;
  const bool write_states = states.extent(0) > 0;
  if (resolve_layout<Space>(launch.layout, h.runs()) == RunLayout::ThreadPerRun) {
    Kokkos::parallel_for(
        "hpt::encode_rich_thread_per_run", Kokkos::RangePolicy<Space>(space, 0, h.runs()),
        KOKKOS_LAMBDA(int r) {
          double tail[kLossWindow];
          const RichStats s = thread_rich_stats(h, r, tail);
          if (write_raw) {
            double scalars[telemetry::kScalarCount];
            for (int c = 0; c < telemetry::kScalarCount; ++c) scalars[c] = h.scalars(r, c);
            for (int f = 0; f < kFeatures; ++f)
              x(r, f) = finite_or_zero<Real>(raw_feature(f, s, scalars));
          }
          if (write_states) fill_loss_state(s, tail, st(r));
        });
    return;
  }
  const std::size_t doubles = ScratchT::doubles(h.loss_capacity(), h.other_capacity());
  const int level = ScratchT::level(h.loss_capacity(), h.other_capacity());
  Policy policy = run_team_policy(space, h.runs(), launch.team_size);
  policy.set_scratch_size(level,
                          Kokkos::PerTeam(ScratchT::bytes(h.loss_capacity(), h.other_capacity())));
  Kokkos::parallel_for(
      "hpt::encode_rich", policy, KOKKOS_LAMBDA(const Member& team) {
        const int r = team.league_rank();
        typename ScratchT::View buf(team.team_scratch(level), doubles);
        const RichStats s = team_rich_stats(team, h, r, buf.data());
        const double* scalars =
            ScratchT::scalars(buf.data(), h.loss_capacity(), h.other_capacity());
        if (write_raw) {
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kFeatures), [&](int f) {
            x(r, f) = finite_or_zero<Real>(raw_feature(f, s, scalars));
          });
        }
        if (write_states) {
          const double* tail = buf.data() + (s.n - window(kLossWindow, s.n));
          Kokkos::single(Kokkos::PerTeam(team), [&]() { fill_loss_state(s, tail, st(r)); });
        }
      });
}

}  // namespace rich

// raw(r, 0..63): the unnormalised rich features of every run. `launch` picks the layout of runs
// on threads (default: by backend and number of runs, see resolve_layout).
template <class Space, class Real>
void encode_rich(const Space& space,
                 const TelemetryHistory<Real, typename Space::memory_space>& history,
                 const View2<Real, typename Space::memory_space>& raw,
                 const EncodeLaunch& launch = {}) {
  HPT_REQUIRE(int(raw.extent(0)) == history.runs() && int(raw.extent(1)) == kFeatures,
              "encode_rich: raw must be (runs, 64)");
  rich::encode_rich_impl(space, history, raw,
                         View1<LossState<Real>, typename Space::memory_space>(), launch);
}

// Raw features and loss states of every run in one launch.
template <class Space, class Real>
void encode_rich(const Space& space,
                 const TelemetryHistory<Real, typename Space::memory_space>& history,
                 const View2<Real, typename Space::memory_space>& raw,
                 const View1<LossState<Real>, typename Space::memory_space>& states,
                 const EncodeLaunch& launch = {}) {
  HPT_REQUIRE(int(raw.extent(0)) == history.runs() && int(raw.extent(1)) == kFeatures,
              "encode_rich: raw must be (runs, 64)");
  HPT_REQUIRE(int(states.extent(0)) == history.runs(), "encode_rich: one loss state per run");
  rich::encode_rich_impl(space, history, raw, states, launch);
}

// states(r): the loss summary the rollout continues (loss_state.hpp), from the same statistics as
// the features (EMAs over the whole history from the oldest entry, alpha = 1/tau).
template <class Space, class Real>
void extract_loss_state(const Space& space,
                        const TelemetryHistory<Real, typename Space::memory_space>& history,
                        const View1<LossState<Real>, typename Space::memory_space>& states,
                        const EncodeLaunch& launch = {}) {
  HPT_REQUIRE(int(states.extent(0)) == history.runs(), "extract_loss_state: one state per run");
  rich::encode_rich_impl(space, history, View2<Real, typename Space::memory_space>(), states,
                         launch);
}

// Bytes encode_rich reads and writes for `runs` runs (for the bench's GB/s): every ring, the
// heads/counts, the scalar table and the raw features.
inline std::size_t encode_rich_bytes(std::size_t runs, std::size_t loss_capacity,
                                     std::size_t other_capacity, std::size_t real_size) {
  const std::size_t per_run =
      (loss_capacity + telemetry::kOtherSeries * other_capacity) * real_size +
      2 * telemetry::kSeriesCount * sizeof(int) + telemetry::kScalarCount * sizeof(double) +
      kFeatures * real_size;
  return runs * per_run;
}

}  // namespace hpt
