#pragma once
// The online training data of the RSSM ensemble: a device ring of the last K+1 observed steps
// (features, log loss, and every member's filtered latent before the step), and the gather of the
// BPTT window from it with the online-bagging weights and the prior noise. Draws are counter-based
// and keyed by the sample's global step, so a sample keeps its weight and noise in every window
// and on every backend and thread count.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/rng.hpp"
#include "core/types.hpp"
#include "kernels/rssm_bptt.hpp"

namespace hpt {

// Random streams of the training draws: rng::key(seed, stream, member, step, index).
constexpr std::uint64_t kRssmNoiseStream = 0x52535353'4e4f4953ULL;
constexpr std::uint64_t kRssmBaggingStream = 0x52535353'42414747ULL;

// Poisson(1) by inversion of its CDF from one uniform draw (exact up to 20 events).
KOKKOS_INLINE_FUNCTION int poisson1(const std::uint64_t key) {
  const double u = rng::uniform(key);
  double p = 0.36787944117144233;  // e^-1
  double cdf = p;
  int n = 0;
  while (u > cdf && n < 20) {
    ++n;
    p /= double(n);
    cdf += p;
  }
  return n;
}

// Bagging weight w_{m,t} of member m for the sample of global step t.
KOKKOS_INLINE_FUNCTION int rssm_bagging_weight(std::uint64_t seed, int member, std::int64_t step) {
  return poisson1(rng::key(seed, kRssmBaggingStream, std::uint64_t(member), std::uint64_t(step)));
}

// Prior noise eps_i of member m for the sample of global step t.
KOKKOS_INLINE_FUNCTION double rssm_prior_noise(std::uint64_t seed, int member, std::int64_t step,
                                               int index) {
  return rng::normal(rng::key(seed, kRssmNoiseStream, std::uint64_t(member), std::uint64_t(step),
                              std::uint64_t(index)));
}

// The last R = K+1 observed steps; global step t lives in slot t % R.
template <class Real, class Mem = MemSpace>
struct RssmRing {
  View2<Real, Mem> features;  // (R, I) normalised features x_t
  View1<Real, Mem> log_loss;  // (R) log L_t
  View3<Real, Mem> latents;   // (R, E, H) every member's latent before x_t was filtered in

  RssmRing() = default;
  RssmRing(int slots, int members, int hidden, int input)
      : features("rssm.ring.features", slots, input),
        log_loss("rssm.ring.log_loss", slots),
        latents("rssm.ring.latents", slots, members, hidden) {}

  int slots() const { return int(log_loss.extent(0)); }
};

// Writes step `step`'s features x (I), log loss and the latents before it (E, H) into its slot.
template <class Space, class Real>
HPT_LAUNCHER void rssm_ring_push(const Space& space,
                                 const RssmRing<Real, typename Space::memory_space>& ring,
                                 const std::int64_t step,
                                 const View1<Real, typename Space::memory_space>& x,
                                 const double log_loss,
                                 const View2<Real, typename Space::memory_space>& latents) {
  const int I = int(ring.features.extent(1));
  const int E = int(ring.latents.extent(1));
  const int H = int(ring.latents.extent(2));
  HPT_REQUIRE(int(x.extent(0)) == I, "rssm_ring_push: x must have the ring's feature count");
  HPT_REQUIRE(int(latents.extent(0)) == E && int(latents.extent(1)) == H,
              "rssm_ring_push: latents must be (E, H)");
  const int slot = int(step % ring.slots());
  const Real l = Real(log_loss);
  const RssmRing<Real, typename Space::memory_space> r = ring;
  Kokkos::parallel_for(
      "hpt::rssm_ring_push", Kokkos::RangePolicy<Space>(space, 0, I + E * H + 1),
      KOKKOS_LAMBDA(const int i) {
        if (i < I) {
          r.features(slot, i) = x(i);
        } else if (i < I + E * H) {
          const int e = (i - I) / H;
          r.latents(slot, e, (i - I) % H) = latents(e, (i - I) % H);
        } else {
          r.log_loss(slot) = l;
        }
      });
}

// The ring slot of global step `step` in a ring of R slots.
KOKKOS_INLINE_FUNCTION int ring_slot(const std::int64_t step, const int slots) {
  return int(step % slots);
}

// window <- the samples of global steps first .. first+steps-1 (their targets need step
// first+steps in the ring too): x_t, y_t = log L_{t+1} - log L_t, h0 = latents before `first`,
// the prior noise keyed by `seed`, and bagging weights (Poisson(1) draws, or 1 without bagging).
template <class Space, class Real>
HPT_LAUNCHER void rssm_gather_window(const Space& space,
                                     const RssmRing<Real, typename Space::memory_space>& ring,
                                     const std::int64_t first, const int steps,
                                     const std::uint64_t seed, const bool bagging,
                                     RssmWindow<Real, typename Space::memory_space>& window) {
  const int R = ring.slots();
  const int K = window.capacity();
  const int I = int(window.x.extent(1));
  const int E = int(window.h0.extent(0));
  const int H = int(window.h0.extent(1));
  const int S = int(window.eps.extent(2));
  HPT_REQUIRE(first >= 0 && steps >= 1 && steps <= K && steps < R,
              "rssm_gather_window: the window must lie inside the ring");
  const RssmRing<Real, typename Space::memory_space> r = ring;
  const RssmWindow<Real, typename Space::memory_space> w = window;
  // One index per element written, in five consecutive ranges (x, y, h0, weight, eps), so that no
  // thread loops over a member's latent or draws (a member per thread left the device idle).
  const int n_x = K * I, n_y = K, n_h0 = E * H, n_weight = E * K, n_eps = E * K * S;
  Kokkos::parallel_for(
      "hpt::rssm_gather_window",
      Kokkos::RangePolicy<Space>(space, 0, n_x + n_y + n_h0 + n_weight + n_eps),
      KOKKOS_LAMBDA(int i) {
        if (i < n_x) {
          const int t = i / I, k = i % I;
          w.x(t, k) = t < steps ? r.features(ring_slot(first + t, R), k) : Real(0);
          return;
        }
        if ((i -= n_x) < n_y) {
          w.y(i) = i < steps ? r.log_loss(ring_slot(first + i + 1, R)) -
                                   r.log_loss(ring_slot(first + i, R))
                             : Real(0);
          return;
        }
        if ((i -= n_y) < n_h0) {
          w.h0(i / H, i % H) = r.latents(ring_slot(first, R), i / H, i % H);
          return;
        }
        if ((i -= n_h0) < n_weight) {
          const int m = i / K, t = i % K;
          const int weight = bagging ? rssm_bagging_weight(seed, m, first + t) : 1;
          w.weight(m, t) = t < steps ? Real(weight) : Real(0);
          return;
        }
        i -= n_weight;
        const int m = i / (K * S), t = (i / S) % K, s = i % S;
        w.eps(m, t, s) = t < steps ? Real(rssm_prior_noise(seed, m, first + t, s)) : Real(0);
      });
  window.steps = steps;
}

}  // namespace hpt
