#pragma once
// Kernels of `dynamics = rssm_prototype` (docs/method.md#parity-with-the-prototype): the
// prototype's RSSM, E GRU members (reset before, h' = (1 - z) h + z n) with a deterministic
// "stochastic" part p = softmax(h[floor(i H / S)]) and one shared loss head L = fmax(exp(clamp(w .
// [h; p], -10, 10)), 1e-6). A rollout feeds each step's decoded loss back as feature 0 only. Online
// training is one step of truncated BPTT (K = 1): the members' GRU steps run in parallel, the
// shared head takes E sequential SGD steps (member order matters), then each member's GRU takes one
// clipped SGD step. One team per member; every kernel gives the same result for any team size.
#include <Kokkos_Core.hpp>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/math.hpp"
#include "core/types.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/gru_weights.hpp"
#include "kernels/rssm_bptt_gru.hpp"

namespace hpt {

// The prototype has one bias per gate: b_hh stays zero and only b_ih is trained.
template <class Real, class Mem = MemSpace>
struct PrototypeRssmParams {
  GruWeights<Real, Mem> gru;  // E members, hidden H, input I
  View1<Real, Mem> head;      // w_L (H + S), shared by the members
  int stochastic = 0;         // S

  PrototypeRssmParams() = default;
  PrototypeRssmParams(int members, int hidden, int stochastic_size, int input)
      : gru(members, hidden, input, "rssm_prototype.gru"),
        head("rssm_prototype.head", std::size_t(hidden + stochastic_size)),
        stochastic(stochastic_size) {}
  int members() const { return gru.members(); }
  int hidden() const { return gru.hidden(); }
  int input() const { return gru.input(); }
};

// Work buffers of one training step.
template <class Real, class Mem = MemSpace>
struct PrototypeRssmWork {
  View2<Real, Mem> h_prev, p;    // (E, H) latents before the step; (E, S) stochastic part
  View2<Real, Mem> r, z, n, hn;  // (E, H) gate activations (hn unused with reset before)
  View2<Real, Mem> dh, carry;    // (E, H)
  View2<Real, Mem> dgate;        // (E, 3H)
  View1<Real, Mem> predicted;    // (E) each member's one-step forecast, before the step's updates
  GruWeights<Real, Mem> grads;

  PrototypeRssmWork() = default;
  PrototypeRssmWork(int E, int H, int S, int I)
      : h_prev("rssm_prototype.h_prev", E, H),
        p("rssm_prototype.p", E, S),
        r("rssm_prototype.r", E, H),
        z("rssm_prototype.z", E, H),
        n("rssm_prototype.n", E, H),
        hn("rssm_prototype.hn", E, H),
        dh("rssm_prototype.dh", E, H),
        carry("rssm_prototype.carry", E, H),
        dgate("rssm_prototype.dgate", E, 3 * H),
        predicted("rssm_prototype.predicted", E),
        grads(E, H, I, "rssm_prototype.grads") {}
};

namespace prototype_rssm {

// clamp that keeps a NaN (the prototype's f32::clamp), then exp, then a NaN-ignoring floor: a NaN
// logit decodes to 1e-6.
template <class Real>
KOKKOS_INLINE_FUNCTION Real decode_loss(const Real logit) {
  const Real c = logit < Real(-10) ? Real(-10) : (logit > Real(10) ? Real(10) : logit);
  return math::fmax(math::exp(c), Real(1e-6));
}

// p = softmax(h[floor(i H / S)]) with max subtraction, written to p (S); called by the whole team,
// which must have h complete (a barrier before); ends with a barrier.
template <class Member, class VecH, class VecP>
KOKKOS_INLINE_FUNCTION void stochastic_part(const Member& team, const VecH& h, const VecP& p,
                                            const int H, const int S) {
  using Real = typename VecP::value_type;
  Real top = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, S),
      [&](const int i, Real& acc) {
        const Real v = h(int((long(i) * H) / S));
        if (v > acc) acc = v;  // a NaN entry is skipped, as f32::max does
      },
      Kokkos::Max<Real>(top));
  Real sum = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, S),
      [&](const int i, Real& acc) { acc += math::exp(h(int((long(i) * H) / S)) - top); },
      Kokkos::Sum<Real>(sum));
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, S), [&](const int i) {
    Kokkos::single(Kokkos::PerThread(team),
                   [&]() { p(i) = math::exp(h(int((long(i) * H) / S)) - top) / sum; });
  });
  team.team_barrier();
}

// w . [h; p] by the whole team.
template <class Member, class VecW, class VecH, class VecP>
KOKKOS_INLINE_FUNCTION typename VecP::value_type head_logit(const Member& team, const VecW& w,
                                                            const VecH& h, const VecP& p,
                                                            const int H, const int S) {
  using Real = typename VecP::value_type;
  Real dot = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, H + S),
      [&](const int i, Real& acc) { acc += w(i) * (i < H ? Real(h(i)) : Real(p(i - H))); },
      Kokkos::Sum<Real>(dot));
  return dot;
}

// Member m's rows of the activations the backward needs.
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION detail::GruSaved<Kokkos::View<Real*, Kokkos::LayoutRight, Mem>> saved_row(
    const PrototypeRssmWork<Real, Mem>& wk, const int m) {
  return {Kokkos::subview(wk.r, m, Kokkos::ALL()), Kokkos::subview(wk.z, m, Kokkos::ALL()),
          Kokkos::subview(wk.n, m, Kokkos::ALL()), Kokkos::subview(wk.hn, m, Kokkos::ALL())};
}

}  // namespace prototype_rssm

// traj(m, t) = the loss member m decodes t + 1 steps after its latent, for t < steps: x starts as
// x0 (I) and only x(0) takes each decoded loss. The latents are not changed.
template <class Space, class Real>
HPT_LAUNCHER void prototype_rssm_rollout(
    const Space& space, const PrototypeRssmParams<Real, typename Space::memory_space>& params,
    const View2<Real, typename Space::memory_space>& latents,
    const View1<Real, typename Space::memory_space>& x0, const int steps,
    const View2<Real, typename Space::memory_space>& traj) {
  const int E = params.members(), H = params.hidden(), I = params.input(), S = params.stochastic;
  HPT_REQUIRE(int(latents.extent(0)) == E && int(latents.extent(1)) == H,
              "prototype_rssm_rollout: latents must be (E, H)");
  HPT_REQUIRE(int(x0.extent(0)) == I, "prototype_rssm_rollout: x0 must have I entries");
  HPT_REQUIRE(steps >= 1 && int(traj.extent(0)) == E && int(traj.extent(1)) >= steps,
              "prototype_rssm_rollout: traj must be (E, >= steps)");
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Scratch = detail::ScratchView1<Space, Real>;
  const std::size_t bytes =
      Scratch::shmem_size(I) + 3 * Scratch::shmem_size(H) + Scratch::shmem_size(S);
  const int level = detail::scratch_level_for<Space>(bytes);
  const auto w = params.gru;
  const auto head = params.head;
  const auto lat = latents;
  const auto in = x0;
  const auto out = traj;
  const auto body = KOKKOS_LAMBDA(const Member& team) {
    const int m = team.league_rank();
    Scratch x(team.team_scratch(level), I), ha(team.team_scratch(level), H),
        hb(team.team_scratch(level), H), rh(team.team_scratch(level), H),
        p(team.team_scratch(level), S);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, I), [&](const int k) {
      Kokkos::single(Kokkos::PerThread(team), [&]() { x(k) = in(k); });
    });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, H), [&](const int k) {
      Kokkos::single(Kokkos::PerThread(team), [&]() { ha(k) = lat(m, k); });
    });
    team.team_barrier();
    Scratch h = ha, h_next = hb;
    for (int t = 0; t < steps; ++t) {
      detail::GruCell::invoke(team, detail::GruGlobalRows<Real, typename Space::memory_space>{w, m},
                              GruReset::Before, x, h, rh, 0, H,
                              [&](const int j, const Real v) { h_next(j) = v; });
      team.team_barrier();
      prototype_rssm::stochastic_part(team, h_next, p, H, S);
      const Real loss =
          prototype_rssm::decode_loss(prototype_rssm::head_logit(team, head, h_next, p, H, S));
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        out(m, t) = loss;
        if (t < steps - 1) x(0) = loss;
      });
      team.team_barrier();
      const Scratch swap = h;
      h = h_next;
      h_next = swap;
    }
  };
  Kokkos::parallel_for("hpt::prototype_rssm_rollout",
                       detail::make_team_policy(space, E, level, bytes, body, 0), body);
}

// One online training step on features x (I) and target loss y (the prototype's train_step with
// K = 1): latents advance to GRU(h, x); the head takes E sequential SGD steps, member m's with
// error (L_m - y) L_m on its combined vector; each member's GRU takes one SGD step along the
// gradient of that error through its newest step, clipped to global norm `clip` per member.
// work.predicted(m) is member m's one-step forecast with the head before any update (what the
// prototype recorded its error from, with a separate rollout).
template <class Space, class Real>
HPT_LAUNCHER void prototype_rssm_train_step(
    const Space& space, const PrototypeRssmParams<Real, typename Space::memory_space>& params,
    const View2<Real, typename Space::memory_space>& latents,
    const View1<Real, typename Space::memory_space>& x, const Real y, const Real lr,
    const Real clip, const PrototypeRssmWork<Real, typename Space::memory_space>& work) {
  using Mem = typename Space::memory_space;
  const int E = params.members(), H = params.hidden(), I = params.input(), S = params.stochastic;
  HPT_REQUIRE(int(latents.extent(0)) == E && int(latents.extent(1)) == H && int(x.extent(0)) == I &&
                  int(work.p.extent(1)) == S && int(work.h_prev.extent(0)) == E,
              "prototype_rssm_train_step: sizes differ from the parameters");
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Row = Kokkos::View<Real*, Kokkos::LayoutRight, Mem>;
  const auto w = params.gru;
  const auto head = params.head;
  const auto lat = latents;
  const auto wk = work;
  const auto in = x;

  // 1. Every member's GRU step, keeping the activations; the latents take the new state.
  const auto forward = KOKKOS_LAMBDA(const Member& team) {
    const int m = team.league_rank();
    const Row hp = Kokkos::subview(wk.h_prev, m, Kokkos::ALL());
    const Row hm = Kokkos::subview(lat, m, Kokkos::ALL());
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, H), [&](const int k) {
      Kokkos::single(Kokkos::PerThread(team), [&]() { hp(k) = hm(k); });
    });
    team.team_barrier();
    const detail::GruSaved<Row> saved = prototype_rssm::saved_row(wk, m);
    const detail::GruInputOfX<Real, Mem, std::decay_t<decltype(in)>> input{w, m, in};
    detail::gru_forward_saved(team, w, m, GruReset::Before, input, hp, hm, saved);
    team.team_barrier();
    prototype_rssm::stochastic_part(team, hm, Kokkos::subview(wk.p, m, Kokkos::ALL()), H, S);
  };
  Kokkos::parallel_for("hpt::prototype_rssm_forward",
                       detail::make_team_policy(space, E, 0, 0, forward, 0), forward);

  // 2. Every member's forecast with the head as it is; then the shared head, member after member:
  // SGD on it, then dh from the updated head.
  const auto heads = KOKKOS_LAMBDA(const Member& team) {
    for (int m = 0; m < E; ++m) {
      const Real logit =
          prototype_rssm::head_logit(team, head, Kokkos::subview(lat, m, Kokkos::ALL()),
                                     Kokkos::subview(wk.p, m, Kokkos::ALL()), H, S);
      Kokkos::single(Kokkos::PerTeam(team),
                     [&]() { wk.predicted(m) = prototype_rssm::decode_loss(logit); });
    }
    team.team_barrier();
    for (int m = 0; m < E; ++m) {
      const Row hm = Kokkos::subview(lat, m, Kokkos::ALL());
      const Row pm = Kokkos::subview(wk.p, m, Kokkos::ALL());
      const Real loss =
          prototype_rssm::decode_loss(prototype_rssm::head_logit(team, head, hm, pm, H, S));
      const Real g = (loss - y) * loss;  // d(loss - y)^2/2 through exp; the clamp is ignored
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, H + S), [&](const int i) {
        Kokkos::single(Kokkos::PerThread(team),
                       [&]() { head(i) -= lr * g * (i < H ? hm(i) : pm(i - H)); });
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, H), [&](const int i) {
        Kokkos::single(Kokkos::PerThread(team), [&]() { wk.dh(m, i) = g * head(i); });
      });
      team.team_barrier();
    }
  };
  Kokkos::parallel_for("hpt::prototype_rssm_heads", Policy(space, 1, Kokkos::AUTO), heads);

  // 3. Each member's GRU gradient through its newest step, clipped, and the SGD step.
  const auto backward = KOKKOS_LAMBDA(const Member& team) {
    const int m = team.league_rank();
    const auto& g = wk.grads;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 3 * H), [&](const int q) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, I),
                           [&](const int k) { g.w_ih(m, q, k) = 0; });
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, H),
                           [&](const int k) { g.w_hh(m, q, k) = 0; });
      Kokkos::single(Kokkos::PerThread(team), [&]() { g.b_ih(m, q) = 0, g.b_hh(m, q) = 0; });
    });
    team.team_barrier();
    const detail::GruSaved<Row> saved = prototype_rssm::saved_row(wk, m);
    const detail::GruBackwardWork<Row> bw{Kokkos::subview(wk.dgate, m, Kokkos::ALL()),
                                          Kokkos::subview(wk.hn, m, Kokkos::ALL())};
    detail::gru_backward(team, w, g, m, GruReset::Before, in,
                         Kokkos::subview(wk.h_prev, m, Kokkos::ALL()), saved,
                         Row(Kokkos::subview(wk.dh, m, Kokkos::ALL())), bw,
                         Row(Kokkos::subview(wk.carry, m, Kokkos::ALL())), false);
    team.team_barrier();
    // The norm over the nine tensors W, U, b of the three gates (b_hh's gradient repeats b_ih's).
    Real sq = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, 3 * H),
        [&](const int q, Real& acc) {
          Real row = 0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, I),
              [&](const int k, Real& a) { a += g.w_ih(m, q, k) * g.w_ih(m, q, k); }, row);
          Real rec = 0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, H),
              [&](const int k, Real& a) { a += g.w_hh(m, q, k) * g.w_hh(m, q, k); }, rec);
          acc += row + rec + g.b_ih(m, q) * g.b_ih(m, q);
        },
        Kokkos::Sum<Real>(sq));
    const Real norm = math::sqrt(sq);
    const Real step = lr * (norm > clip ? clip / norm : Real(1));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 3 * H), [&](const int q) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, I),
                           [&](const int k) { w.w_ih(m, q, k) -= step * g.w_ih(m, q, k); });
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, H),
                           [&](const int k) { w.w_hh(m, q, k) -= step * g.w_hh(m, q, k); });
      Kokkos::single(Kokkos::PerThread(team), [&]() { w.b_ih(m, q) -= step * g.b_ih(m, q); });
    });
  };
  Kokkos::parallel_for("hpt::prototype_rssm_backward",
                       detail::make_team_policy(space, E, 0, 0, backward, 0), backward);
}

}  // namespace hpt
