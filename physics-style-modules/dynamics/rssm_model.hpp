#pragma once
// The RSSM ensemble's state on the device: every parameter tensor in one flat ParameterStore
// (values and gradients, so the optimizer styles train it as they train any model), tensor views
// over both buffers, and the members' latents h.
#include "core/types.hpp"
#include "kernels/parameter_store.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt {

template <class Real, class Mem = MemSpace>
struct RssmModel {
  ParameterStore<Real, Mem> store;
  RssmParams<Real, Mem> params;  // views over store.values()
  GradRssm<Real, Mem> grads;     // views over store.gradients()
  View2<Real, Mem> latents;      // (E, H)

  RssmModel(int members, int hidden, int stochastic, int input)
      : latents("rssm.latents", members, hidden) {
    declare_rssm_tensors(store, members, hidden, stochastic, input);
    store.allocate();
    params = RssmParams<Real, Mem>(store.values(), members, hidden, stochastic, input);
    grads = GradRssm<Real, Mem>(store.gradients(), members, hidden, stochastic, input);
  }
  // An optimizer keeps a pointer to the store: the model stays where it was built.
  RssmModel(const RssmModel&) = delete;
  RssmModel& operator=(const RssmModel&) = delete;
};

}  // namespace hpt
