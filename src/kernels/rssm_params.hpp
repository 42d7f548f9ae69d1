#pragma once
// Parameters of the RSSM ensemble (docs/method.md#rssm-ensemble): per member a GRU, a diagonal
// Gaussian prior over the stochastic state s, and a loss head on c = [h; s] predicting the next
// change of log loss.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/rng.hpp"
#include "core/types.hpp"
#include "kernels/gru_weights.hpp"
#include "kernels/parameter_store.hpp"

namespace hpt {

constexpr double kPriorScaleFloor = 1e-4;  // sigma_s = softplus(B h + b) + kPriorScaleFloor
// log var_delta is clamped to +-kLogVarLimit before exp, so an untrained head cannot give an
// infinite or zero standard deviation (exp(10) fits float).
constexpr double kLogVarLimit = 20.0;
// An untrained loss head forecasts a nearly flat loss with small uncertainty: its weights are
// scaled Glorot (x kLossHeadInitScale) and its log-variance bias starts at kInitialLogVar
// (sigma_delta = 0.01 per step in log loss), instead of an O(1) random walk in log loss.
constexpr double kLossHeadInitScale = 0.01;
constexpr double kInitialLogVar = -9.210340371976184;  // log(1e-4)

template <class Real, class Mem = MemSpace>
struct RssmParams {
  GruWeights<Real, Mem> gru;
  View3<Real, Mem> prior_mean_w;   // A (E, S, H): mu_s = A h + a
  View2<Real, Mem> prior_mean_b;   // a (E, S)
  View3<Real, Mem> prior_scale_w;  // B (E, S, H): sigma_s = softplus(B h + b) + 1e-4
  View2<Real, Mem> prior_scale_b;  // b (E, S)
  View3<Real, Mem> loss_head_w;    // C (E, 2, H+S): (mu_delta, log var_delta) = C [h; s] + d
  View2<Real, Mem> loss_head_b;    // d (E, 2)
  // The flat buffer the views above point into when built over one (keeps it alive), else empty.
  View1<Real, Mem> storage;

  RssmParams() = default;
  RssmParams(int members, int hidden, int stochastic, int input)
      : gru(members, hidden, input, "rssm.gru"),
        prior_mean_w("rssm.prior_mean_w", members, stochastic, hidden),
        prior_mean_b("rssm.prior_mean_b", members, stochastic),
        prior_scale_w("rssm.prior_scale_w", members, stochastic, hidden),
        prior_scale_b("rssm.prior_scale_b", members, stochastic),
        loss_head_w("rssm.loss_head_w", members, 2, hidden + stochastic),
        loss_head_b("rssm.loss_head_b", members, 2) {}
  // Unmanaged views over `flat` (laid out as declare_rssm_tensors does, in for_each_tensor order),
  // so a ParameterStore's values or gradients are seen with the usual tensor shapes.
  RssmParams(const View1<Real, Mem>& flat, int members, int hidden, int stochastic, int input)
      : storage(flat) {
    const int E = members, H = hidden, S = stochastic, I = input;
    HPT_REQUIRE(flat.extent(0) == flat_size(E, H, S, I),
                "RssmParams: flat buffer size does not match the RSSM sizes");
    Real* next = flat.data();
    const auto take = [&next](std::size_t count) {
      Real* p = next;
      next += count;
      return p;
    };
    const auto n = [](int a, int b, int c = 1) { return std::size_t(a) * b * c; };
    gru.w_ih = View3<Real, Mem>(take(n(E, 3 * H, I)), E, 3 * H, I);
    gru.w_hh = View3<Real, Mem>(take(n(E, 3 * H, H)), E, 3 * H, H);
    gru.b_ih = View2<Real, Mem>(take(n(E, 3 * H)), E, 3 * H);
    gru.b_hh = View2<Real, Mem>(take(n(E, 3 * H)), E, 3 * H);
    prior_mean_w = View3<Real, Mem>(take(n(E, S, H)), E, S, H);
    prior_mean_b = View2<Real, Mem>(take(n(E, S)), E, S);
    prior_scale_w = View3<Real, Mem>(take(n(E, S, H)), E, S, H);
    prior_scale_b = View2<Real, Mem>(take(n(E, S)), E, S);
    loss_head_w = View3<Real, Mem>(take(n(E, 2, H + S)), E, 2, H + S);
    loss_head_b = View2<Real, Mem>(take(n(E, 2)), E, 2);
  }

  // Elements of all tensors together.
  static std::size_t flat_size(int E, int H, int S, int I) {
    const std::size_t e = std::size_t(E);
    return e * (3 * H * (I + H + 2) + 2 * S * (H + 1) + 2 * (H + S + 1));
  }

  KOKKOS_INLINE_FUNCTION int members() const { return gru.members(); }
  KOKKOS_INLINE_FUNCTION int hidden() const { return gru.hidden(); }
  KOKKOS_INLINE_FUNCTION int input() const { return gru.input(); }
  KOKKOS_INLINE_FUNCTION int stochastic() const { return static_cast<int>(prior_mean_w.extent(1)); }

  // Calls fn(name, data pointer, shape) for every tensor, in a fixed order (checkpoints, init).
  template <class Fn>
  void for_each_tensor(Fn&& fn) const {
    auto shape = [](const auto& v) {
      std::vector<std::size_t> s;
      const unsigned rank = v.rank;
      for (unsigned r = 0; r < rank; ++r) s.push_back(v.extent(r));
      return s;
    };
    fn("gru.w_ih", gru.w_ih.data(), shape(gru.w_ih));
    fn("gru.w_hh", gru.w_hh.data(), shape(gru.w_hh));
    fn("gru.b_ih", gru.b_ih.data(), shape(gru.b_ih));
    fn("gru.b_hh", gru.b_hh.data(), shape(gru.b_hh));
    fn("prior.mean_w", prior_mean_w.data(), shape(prior_mean_w));
    fn("prior.mean_b", prior_mean_b.data(), shape(prior_mean_b));
    fn("prior.scale_w", prior_scale_w.data(), shape(prior_scale_w));
    fn("prior.scale_b", prior_scale_b.data(), shape(prior_scale_b));
    fn("loss_head.w", loss_head_w.data(), shape(loss_head_w));
    fn("loss_head.b", loss_head_b.data(), shape(loss_head_b));
  }
};

// Gradients of the loss with respect to every RSSM tensor: the same layout, over a gradient buffer.
template <class Real, class Mem = MemSpace>
using GradRssm = RssmParams<Real, Mem>;

// Declares the RSSM tensors in `store` in for_each_tensor order, a rank-3 tensor (E, R, C) as the
// matrix (E * R, C) and a rank-2 one (E, C) as (E, C), so RssmParams(store.values(), ...) views
// the store's buffer with the usual shapes.
template <class Real, class Mem>
void declare_rssm_tensors(ParameterStore<Real, Mem>& store, int E, int H, int S, int I) {
  store.add_matrix("gru.w_ih", E * 3 * H, I);
  store.add_matrix("gru.w_hh", E * 3 * H, H);
  store.add_matrix("gru.b_ih", E, 3 * H);
  store.add_matrix("gru.b_hh", E, 3 * H);
  store.add_matrix("prior.mean_w", E * S, H);
  store.add_matrix("prior.mean_b", E, S);
  store.add_matrix("prior.scale_w", E * S, H);
  store.add_matrix("prior.scale_b", E, S);
  store.add_matrix("loss_head.w", E * 2, H + S);
  store.add_matrix("loss_head.b", E, 2);
}

// Seeded initialisation: GRU weights and biases U(+-1/sqrt(H)) (PyTorch's GRUCell), the heads
// Glorot-uniform per member (limit sqrt(6 / (fan_in + fan_out))), head biases zero.
template <class Space, class Real>
HPT_LAUNCHER void initialize_rssm_params(const Space& space,
                                         const RssmParams<Real, typename Space::memory_space>& p,
                                         std::uint64_t seed) {
  const double H = p.hidden();
  const double S = p.stochastic();
  const double gru_limit = 1.0 / std::sqrt(H);
  const double prior_limit = std::sqrt(6.0 / (H + S));
  const double head_limit = std::sqrt(6.0 / (H + S + 2.0));
  std::uint64_t stream = 0;
  p.for_each_tensor([&](const std::string& name, Real* data, const std::vector<std::size_t>& s) {
    std::size_t count = 1;
    for (const auto e : s) count *= e;
    double limit = 0.0;  // head biases
    if (name.rfind("gru.", 0) == 0) limit = gru_limit;
    if (name == "prior.mean_w" || name == "prior.scale_w") limit = prior_limit;
    if (name == "loss_head.w") limit = kLossHeadInitScale * head_limit;
    fill_uniform(space, View1<Real, typename Space::memory_space>(data, count), seed, stream++, 0,
                 limit);
  });
  const auto head_b = p.loss_head_b;
  Kokkos::parallel_for(
      "hpt::init_log_var_bias", Kokkos::RangePolicy<Space>(space, 0, p.members()),
      KOKKOS_LAMBDA(const int m) { head_b(m, 1) = Real(kInitialLogVar); });
}

}  // namespace hpt
