#pragma once
// The rich statistics of one run computed by plain threads straight from the rings, one walk per
// series, each a single pass oldest to newest (EMAs by their recursion, window moments around the
// newest value: WindowMoments, rich_stats.hpp), a logarithm taken only where a statistic needs it.
// A walk fills only its series' fields of RichStats, so one thread can run
// every walk (thread_rich_stats, the thread-per-run layout) or several threads one walk each (the
// series-per-thread layout of encode_rich.hpp); the fields and their bits are the same.
#include <Kokkos_Core.hpp>

#include "core/math.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/multi_reducer.hpp"
#include "kernels/rich_stats.hpp"
#include "kernels/telemetry_history.hpp"

namespace hpt {

namespace rich {

// Calls f(i, load(i)) for i = begin, ..., end - 1 in order, issuing the loads kPrefetch at a time
// so one thread has several memory requests in flight (the walks are latency-bound).
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

// Chronological reader of one ring of run r: entry i (oldest first) as double.
template <class Real, class Mem>
struct ChronologicalRing {
  const TelemetryHistory<Real, Mem>& h;
  int r, series, count, capacity, first;

  KOKKOS_INLINE_FUNCTION ChronologicalRing(const TelemetryHistory<Real, Mem>& history, int run,
                                           int s)
      : h(history),
        r(run),
        series(s),
        count(history.count(run, s)),
        capacity(history.capacity(s)),
        first((history.head(run, s) - count + capacity) % capacity) {}

  KOKKOS_INLINE_FUNCTION double operator()(int i) const {
    const int k = first + i;
    const int slot = k >= capacity ? k - capacity : k;
    return series == telemetry::kLossSeries ? double(h.loss(r, slot))
                                            : double(h.other(r, series - 1, slot));
  }
};

// The loss walk's accumulators. enter<Windows> takes the entry i of age `age` and log loss l for
// an entry inside the newest `Windows` of the windows 128, 32 and 8 (0: older than all three), so
// each of the walk's four stretches of age updates only what applies to it, without a test.
struct LossWalk {
  double shift;  // the newest log loss
  WindowMoments m8, m32, m128;
  double inc = 0.0, absd = 0.0, prev = 0.0, first = 0.0, newest_but_one = 0.0;
  double e4 = 0.0, e16 = 0.0, e64 = 0.0;
  double best = reduce::infinity(), lo = reduce::infinity(), hi = -reduce::infinity();

  KOKKOS_INLINE_FUNCTION LossWalk(double newest, int n)
      : shift(newest), m8(window(8, n)), m32(window(32, n)), m128(window(128, n)) {}

  // `tail` gets the newest m8.w log losses, oldest first.
  template <int Windows>
  KOKKOS_INLINE_FUNCTION void enter(int i, int age, double l, double* tail) {
    if (i == 0) {
      e4 = e16 = e64 = l;
      first = l;
    } else {
      e4 += (l - e4) / 4.0;
      e16 += (l - e16) / 16.0;
      e64 += (l - e64) / 64.0;
      if constexpr (Windows >= 2) {
        inc += l > prev ? 1.0 : 0.0;
        absd += math::fabs(l - prev);
      }
    }
    if (l < best) best = l;
    if constexpr (Windows >= 1) {
      m128.add_inside(age, l - shift);
      if (l < lo) lo = l;
      if (l > hi) hi = l;
    }
    if constexpr (Windows >= 2) m32.add_inside(age, l - shift);
    if constexpr (Windows >= 3) {
      m8.add_inside(age, l - shift);
      tail[m8.w - 1 - age] = l;
      if (age == 1) newest_but_one = l;
    }
    prev = l;
  }
};

// The loss fields of s, in one pass oldest to newest (in four stretches of age: older than 128,
// then inside 128, 32 and 8). `tail` receives the newest min(kLossWindow, n) log losses, oldest
// first.
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION void walk_loss(const TelemetryHistory<Real, Mem>& h, int r, RichStats& s,
                                      double* tail) {
  static_assert(kLossWindow == 8, "the loss tail is the newest window of 8");
  const ChronologicalRing<Real, Mem> loss(h, r, telemetry::kLossSeries);
  const int n = s.n = loss.count;
  LossWalk a(n > 0 ? safe_log(loss(n - 1), kLossFloor) : 0.0, n);
  const int from128 = n - a.m128.w, from32 = n - a.m32.w, from8 = n - a.m8.w;
  for_each_prefetched(0, from128, loss, [&](int i, double raw) {
    a.enter<0>(i, n - 1 - i, safe_log(raw, kLossFloor), tail);
  });
  for_each_prefetched(from128, from32, loss, [&](int i, double raw) {
    a.enter<1>(i, n - 1 - i, safe_log(raw, kLossFloor), tail);
  });
  for_each_prefetched(from32, from8, loss, [&](int i, double raw) {
    a.enter<2>(i, n - 1 - i, safe_log(raw, kLossFloor), tail);
  });
  for_each_prefetched(from8, n, loss, [&](int i, double raw) {
    a.enter<3>(i, n - 1 - i, safe_log(raw, kLossFloor), tail);
  });
  s.lt = n > 0 ? a.prev : 0.0;
  s.lprev = n < 2 ? s.lt : a.newest_but_one;
  s.lfirst = n > 0 ? a.first : 0.0;
  s.mean8 = a.m8.mean(a.shift);
  s.mean32 = a.m32.mean(a.shift);
  s.mean128 = a.m128.mean(a.shift);
  s.std8 = a.m8.std_dev();
  s.std32 = a.m32.std_dev();
  s.std128 = a.m128.std_dev();
  s.slope8 = a.m8.least_squares_slope();
  s.slope32 = a.m32.least_squares_slope();
  s.slope128 = a.m128.least_squares_slope();
  s.ema4 = a.e4;
  s.ema16 = a.e16;
  s.ema64 = a.e64;
  s.best = n > 0 ? a.best : 0.0;
  s.min128 = n > 0 ? a.lo : 0.0;
  s.max128 = n > 0 ? a.hi : 0.0;
  s.inc_frac32 = ratio(a.inc, window(32, n - 1));
  s.abs_delta32 = ratio(a.absd, window(32, n - 1));
}

// The gradient-norm fields of s: the EMA and the increases over everything, the log-norm windows
// (logs of the newest 32 only) and the linear window of 32, in one pass.
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION void walk_gradient(const TelemetryHistory<Real, Mem>& h, int r,
                                          RichStats& s) {
  const ChronologicalRing<Real, Mem> grad(h, r, telemetry::kGradSeries);
  const int ng = s.ng = grad.count;
  const double g_t = ng > 0 ? grad(ng - 1) : 0.0;
  const double lg_t = ng > 0 ? safe_log(g_t, kTiny) : 0.0;
  WindowMoments m8(window(8, ng)), m32(window(32, ng)), linear32(window(32, ng));
  double ge16 = 0, ginc = 0, gprev = 0.0;
  double gmin = reduce::infinity(), gmax = -reduce::infinity();
  for_each_prefetched(0, ng, grad, [&](int i, double g) {
    const int age = ng - 1 - i;
    ge16 = i == 0 ? g : ge16 + (g - ge16) / 16.0;
    if (age < 32) {
      const double lg = safe_log(g, kTiny);
      m8.add(age, lg - lg_t);
      m32.add_inside(age, lg - lg_t);
      linear32.add_inside(age, g - g_t);
      if (lg < gmin) gmin = lg;
      if (lg > gmax) gmax = lg;
      if (i >= 1) ginc += g > gprev ? 1.0 : 0.0;
    }
    gprev = g;
  });
  s.g_t = g_t;
  s.lg_t = lg_t;
  s.gmean8 = m8.mean(lg_t);
  s.gmean32 = m32.mean(lg_t);
  s.gstd8 = m8.std_dev();
  s.gstd32 = m32.std_dev();
  s.gslope8 = m8.least_squares_slope();
  s.gslope32 = m32.least_squares_slope();
  s.gema16_linear = ng > 0 ? ge16 : 0.0;
  s.gmin32 = ng > 0 ? gmin : 0.0;
  s.gmax32 = ng > 0 ? gmax : 0.0;
  s.gcv32_linear = ng > 0 ? linear32.std_dev() / math::max(linear32.mean(g_t), kTiny) : 0.0;
  s.ginc_frac32 = ratio(ginc, window(32, ng - 1));
}

// The update-norm fields of s: EMA over everything, log slope over the newest 8, in one pass.
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION void walk_update(const TelemetryHistory<Real, Mem>& h, int r, RichStats& s) {
  const ChronologicalRing<Real, Mem> update(h, r, telemetry::kUpdateSeries);
  const int nu = s.nu = update.count;
  const double lu_t = nu > 0 ? safe_log(update(nu - 1), kTiny) : 0.0;
  WindowMoments m8(window(8, nu));
  double ue16 = 0;
  for_each_prefetched(0, nu, update, [&](int i, double u) {
    ue16 = i == 0 ? u : ue16 + (u - ue16) / 16.0;
    const int age = nu - 1 - i;
    if (age < 8) m8.add_inside(age, safe_log(u, kTiny) - lu_t);
  });
  s.lu_t = lu_t;
  s.uslope8 = m8.least_squares_slope();
  s.uema16_linear = nu > 0 ? ue16 : 0.0;
}

// The cosine fields of s (newest windows only) and the weight-norm fields (log slope over the
// newest 32): the two short walks, one thread's work.
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION void walk_cosine_and_weight(const TelemetryHistory<Real, Mem>& h, int r,
                                                   RichStats& s) {
  const ChronologicalRing<Real, Mem> cosine(h, r, telemetry::kCosSeries);
  const int nc = s.nc = cosine.count;
  const int cw8 = window(8, nc), cw32 = window(32, nc);
  double cs8 = 0, cs32 = 0, clast = 0;
  for_each_prefetched(nc - cw32, nc, cosine, [&](int i, double c) {
    if (nc - 1 - i < 8) cs8 += c;
    cs32 += c;
    clast = c;
  });
  s.c_t = nc > 0 ? clast : 0.0;
  s.cmean8 = ratio(cs8, cw8);
  s.cmean32 = ratio(cs32, cw32);

  const ChronologicalRing<Real, Mem> weight(h, r, telemetry::kWeightSeries);
  const int nw = s.nw = weight.count;
  const double lw_t = nw > 0 ? safe_log(weight(nw - 1), kTiny) : 0.0;
  WindowMoments m32(window(32, nw));
  for_each_prefetched(nw - m32.w, nw, weight, [&](int i, double w) {
    m32.add_inside(nw - 1 - i, safe_log(w, kTiny) - lw_t);
  });
  s.lw_t = lw_t;
  s.wslope32 = m32.least_squares_slope();
}

// Walks of the series-per-thread layout: walk `role` of run r (kWalks of them per run).
constexpr int kWalks = 4;
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION void walk(int role, const TelemetryHistory<Real, Mem>& h, int r,
                                 RichStats& s, double* tail) {
  switch (role) {
    case 0:
      walk_loss(h, r, s, tail);
      break;
    case 1:
      walk_gradient(h, r, s);
      break;
    case 2:
      walk_update(h, r, s);
      break;
    default:
      walk_cosine_and_weight(h, r, s);
  }
}

// Every statistic of run r by one thread (the thread-per-run layout).
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION RichStats thread_rich_stats(const TelemetryHistory<Real, Mem>& h, int r,
                                                   double* tail) {
  RichStats s;
  for (int role = 0; role < kWalks; ++role) walk(role, h, r, s, tail);
  return s;
}

}  // namespace rich

}  // namespace hpt
