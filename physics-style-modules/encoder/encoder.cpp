#include "physics-style-modules/encoder/encoder.hpp"

#include "core/error.hpp"
#include "kernels/encode_rich.hpp"

namespace hpt {

Encoder::Encoder(int loss_capacity, int other_capacity, double clamp)
    : loss_capacity_(loss_capacity), other_capacity_(other_capacity), clamp_(clamp) {
  HPT_REQUIRE(loss_capacity >= 1 && other_capacity >= 1 && clamp > 0.0,
              "Encoder: capacities and clamp must be positive");
}

Encoder::History Encoder::create_history(int runs) const {
  return hpt::create_history<real, MemSpace>(runs, loss_capacity_, other_capacity_);
}

void Encoder::check_shapes(const History& history, const View2<real>& features) {
  HPT_REQUIRE(int(features.extent(0)) == history.runs() && int(features.extent(1)) == kFeatures,
              "Encoder::encode: features must be (" + std::to_string(history.runs()) + ", " +
                  std::to_string(kFeatures) + ")");
}

void Encoder::extract_loss_state(const History& history,
                                 const View1<LossState<real>>& states) const {
  hpt::extract_loss_state(ExecSpace(), history, states, EncodeLaunch{}, &workspace());
}

View1<real> Encoder::normalizer_mean(int run) const {
  const Normalizer* n = normalizer();
  if (!n || n->runs() == 0) return View1<real>();
  HPT_REQUIRE(run >= 0 && run < n->runs(), "Encoder::normalizer_mean: run out of range");
  return Kokkos::subview(n->center, run, Kokkos::ALL());
}

View1<real> Encoder::normalizer_inv_std(int run) const {
  const Normalizer* n = normalizer();
  if (!n || n->runs() == 0) return View1<real>();
  HPT_REQUIRE(run >= 0 && run < n->runs(), "Encoder::normalizer_inv_std: run out of range");
  return Kokkos::subview(n->inv_std, run, Kokkos::ALL());
}

}  // namespace hpt
