#pragma once
// `encoder = rich` (docs/method.md#rich-encoder): the 64 raw features of rich_features.hpp, before
// the z-score normaliser, and the per-run LossState that the rollout continues (loss_state.hpp).
// Kernels over the runs, in one of three layouts (RunLayout, run_layout.hpp):
//  * team per run: the team copies the run's rings once into team scratch (oldest first, logs
//    taken once), two fused team reductions give every window statistic (sums/min/max, then
//    squared deviations and slope numerators), and the team writes the 64 features;
//  * thread per run: one thread walks every ring, one pass each (rich_series_walk.hpp);
//  * series per thread: each thread one series walk of one run (the same walks, so the same bits
//    as thread per run); the statistics meet in a workspace (rich_workspace.hpp), then a second
//    kernel, a team per 32 runs, writes the features.
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
#include "kernels/rich_series_walk.hpp"
#include "kernels/rich_stats.hpp"
#include "kernels/rich_workspace.hpp"
#include "kernels/telemetry_history.hpp"

namespace hpt {

namespace rich {

constexpr int kScratchLevel0Bytes = 32 * 1024;  // larger histories go to level-1 scratch

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

// The 64 raw features of run r from its statistics into row(0..63): the run's scalar row copied
// first, the loop unrolled by the compiler (each branch of raw_feature resolved at compile time).
template <class Real, class Mem, class Row>
KOKKOS_INLINE_FUNCTION void write_raw_features(const RichStats& s,
                                               const TelemetryHistory<Real, Mem>& h, const int r,
                                               const Row& row) {
  double scalars[telemetry::kScalarCount];
  for (int c = 0; c < telemetry::kScalarCount; ++c) scalars[c] = h.scalars(r, c);
  for (int f = 0; f < kFeatures; ++f) row(f) = finite_or_zero<Real>(raw_feature(f, s, scalars));
}

template <class Space, class Real>
HPT_LAUNCHER void encode_thread_per_run(
    const Space& space, const TelemetryHistory<Real, typename Space::memory_space>& h,
    const View2<Real, typename Space::memory_space>& x,
    const View1<LossState<Real>, typename Space::memory_space>& st) {
  const bool write_raw = x.extent(0) > 0, write_states = st.extent(0) > 0;
  Kokkos::parallel_for(
      "hpt::encode_rich_thread_per_run", Kokkos::RangePolicy<Space>(space, 0, h.runs()),
      KOKKOS_LAMBDA(int r) {
        double tail[kLossWindow];
        const RichStats s = thread_rich_stats(h, r, tail);
        if (write_raw) write_raw_features(s, h, r, [&](int f) -> Real& { return x(r, f); });
        if (write_states) fill_loss_state(s, tail, st(r));
      });
}

// Runs per team of encode_features_per_tile.
constexpr int kTileRuns = 32;

// The features and loss states of every run from its statistics: a team per tile of kTileRuns
// runs, a thread per run. The thread loads its run's statistics at once (one batch of independent
// loads) and writes its features into team scratch; the team then writes the tile's rows of x,
// which are contiguous, in order.
template <class Space, class Real>
HPT_LAUNCHER void encode_features_per_tile(
    const Space& space, const TelemetryHistory<Real, typename Space::memory_space>& h,
    const View1<RichStats, typename Space::memory_space>& stats,
    const View2<double, typename Space::memory_space>& tails,
    const View2<Real, typename Space::memory_space>& x,
    const View1<LossState<Real>, typename Space::memory_space>& st) {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Tile = Kokkos::View<Real**, Kokkos::LayoutRight, typename Space::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr int kStride = kFeatures + 1;  // odd: the threads' rows start in distinct banks
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
  const bool write_raw = x.extent(0) > 0, write_states = st.extent(0) > 0;
  const int runs = h.runs(), tiles = (runs + kTileRuns - 1) / kTileRuns;
  Policy policy = host ? Policy(space, tiles, Kokkos::AUTO) : Policy(space, tiles, kTileRuns);
  policy.set_scratch_size(0, Kokkos::PerTeam(Tile::shmem_size(kTileRuns, kStride)));
  Kokkos::parallel_for(
      "hpt::encode_rich_features", policy, KOKKOS_LAMBDA(const Member& team) {
        const int r0 = team.league_rank() * kTileRuns;
        const int nr = runs - r0 < kTileRuns ? runs - r0 : kTileRuns;
        const Tile tile(team.team_scratch(0), kTileRuns, kStride);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nr), [&](int j) {
          const RichStats s = stats(r0 + j);
          if (write_raw)
            write_raw_features(s, h, r0 + j, [&](int f) -> Real& { return tile(j, f); });
          if (write_states) fill_loss_state(s, &tails(r0 + j, 0), st(r0 + j));
        });
        if (!write_raw) return;
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nr * kFeatures), [&](int k) {
          x(r0 + k / kFeatures, k % kFeatures) = tile(k / kFeatures, k % kFeatures);
        });
      });
}

// Series per thread: one thread per (series walk, run), walk-major so a warp shares one walk (the
// walks differ in length; no thread waits for another's); the statistics meet in the workspace,
// then encode_features_per_tile writes the features.
template <class Space, class Real>
HPT_LAUNCHER void encode_series_per_thread(
    const Space& space, const TelemetryHistory<Real, typename Space::memory_space>& h,
    const View2<Real, typename Space::memory_space>& x,
    const View1<LossState<Real>, typename Space::memory_space>& st,
    RichWorkspace<typename Space::memory_space>& workspace) {
  const int runs = h.runs();
  workspace.fit(runs);
  const auto stats = workspace.stats;
  const auto tails = workspace.tails;
  Kokkos::parallel_for(
      "hpt::encode_rich_walks",
      Kokkos::RangePolicy<Space>(space, 0, std::size_t(kWalks) * std::size_t(runs)),
      KOKKOS_LAMBDA(std::size_t i) {
        const int r = int(i % std::size_t(runs));
        walk(int(i / std::size_t(runs)), h, r, stats(r), &tails(r, 0));
      });
  encode_features_per_tile(space, h, stats, tails, x, st);
}

template <class Space, class Real>
HPT_LAUNCHER void encode_team_per_run(
    const Space& space, const TelemetryHistory<Real, typename Space::memory_space>& h,
    const View2<Real, typename Space::memory_space>& x,
    const View1<LossState<Real>, typename Space::memory_space>& st, int team_size) {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using ScratchT = Scratch<Space>;
  const bool write_raw = x.extent(0) > 0, write_states = st.extent(0) > 0;
  const std::size_t doubles = ScratchT::doubles(h.loss_capacity(), h.other_capacity());
  const int level = ScratchT::level(h.loss_capacity(), h.other_capacity());
  Policy policy = run_team_policy(space, h.runs(), team_size);
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

// One launch: raw features (if raw is allocated) and loss states (if states is allocated).
// `workspace` serves the series-per-thread layout (nullptr: a temporary one).
template <class Space, class Real>
void encode_rich_impl(const Space& space,
                      const TelemetryHistory<Real, typename Space::memory_space>& history,
                      const View2<Real, typename Space::memory_space>& raw,
                      const View1<LossState<Real>, typename Space::memory_space>& states,
                      const EncodeLaunch& launch,
                      RichWorkspace<typename Space::memory_space>* workspace) {
  switch (resolve_layout<Space>(launch.layout, history.runs())) {
    case RunLayout::ThreadPerRun:
      return encode_thread_per_run(space, history, raw, states);
    case RunLayout::SeriesPerThread: {
      RichWorkspace<typename Space::memory_space> temporary;
      return encode_series_per_thread(space, history, raw, states,
                                      workspace ? *workspace : temporary);
    }
    default:
      return encode_team_per_run(space, history, raw, states, launch.team_size);
  }
}

}  // namespace rich

// raw(r, 0..63): the unnormalised rich features of every run. `launch` picks the layout of runs
// on threads (default: by backend and number of runs, see resolve_layout); a caller that encodes
// repeatedly passes a workspace it keeps (used by the series-per-thread layout).
template <class Space, class Real>
void encode_rich(const Space& space,
                 const TelemetryHistory<Real, typename Space::memory_space>& history,
                 const View2<Real, typename Space::memory_space>& raw,
                 const EncodeLaunch& launch = {},
                 rich::RichWorkspace<typename Space::memory_space>* workspace = nullptr) {
  HPT_REQUIRE(int(raw.extent(0)) == history.runs() && int(raw.extent(1)) == kFeatures,
              "encode_rich: raw must be (runs, 64)");
  rich::encode_rich_impl(space, history, raw,
                         View1<LossState<Real>, typename Space::memory_space>(), launch, workspace);
}

// Raw features and loss states of every run in one launch.
template <class Space, class Real>
void encode_rich(const Space& space,
                 const TelemetryHistory<Real, typename Space::memory_space>& history,
                 const View2<Real, typename Space::memory_space>& raw,
                 const View1<LossState<Real>, typename Space::memory_space>& states,
                 const EncodeLaunch& launch = {},
                 rich::RichWorkspace<typename Space::memory_space>* workspace = nullptr) {
  HPT_REQUIRE(int(raw.extent(0)) == history.runs() && int(raw.extent(1)) == kFeatures,
              "encode_rich: raw must be (runs, 64)");
  HPT_REQUIRE(int(states.extent(0)) == history.runs(), "encode_rich: one loss state per run");
  rich::encode_rich_impl(space, history, raw, states, launch, workspace);
}

// states(r): the loss summary the rollout continues (loss_state.hpp), from the same statistics as
// the features (EMAs over the whole history from the oldest entry, alpha = 1/tau).
template <class Space, class Real>
void extract_loss_state(const Space& space,
                        const TelemetryHistory<Real, typename Space::memory_space>& history,
                        const View1<LossState<Real>, typename Space::memory_space>& states,
                        const EncodeLaunch& launch = {},
                        rich::RichWorkspace<typename Space::memory_space>* workspace = nullptr) {
  HPT_REQUIRE(int(states.extent(0)) == history.runs(), "extract_loss_state: one state per run");
  rich::encode_rich_impl(space, history, View2<Real, typename Space::memory_space>(), states,
                         launch, workspace);
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
