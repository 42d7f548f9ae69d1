#include "physics-style-modules/dynamics/rssm.hpp"

#include <string>

#include "core/error.hpp"
#include "kernels/ensemble_rollout_dispatch.hpp"

namespace hpt {

RssmDynamics::RssmDynamics(int members, int hidden, int stochastic, int input, GruReset reset,
                           const RssmTrainOptions& training)
    : model_(members, hidden, stochastic, input), reset_(reset), training_(training) {
  HPT_REQUIRE(members >= 1 && hidden >= 1 && stochastic >= 1 && input >= 1,
              "RssmDynamics: every size must be positive");
}

RssmDynamics::RssmDynamics(const Config& config)
    : RssmDynamics(static_cast<int>(config.get_int("dynamics.members")),
                   static_cast<int>(config.get_int("dynamics.hidden")),
                   static_cast<int>(config.get_int("dynamics.stochastic")), kFeatures,
                   config.get_string("gru.reset") == "before" ? GruReset::Before : GruReset::After,
                   rssm_train_options_from_config(config)) {
  initialize(static_cast<std::uint64_t>(config.get_int("dynamics.seed")));
}

void RssmDynamics::initialize(std::uint64_t seed) {
  initialize_rssm_params(ExecSpace(), model_.params, seed);
  Kokkos::deep_copy(ExecSpace(), model_.latents, real(0));
  ExecSpace().fence();
  if (online_) online_->reset();
}

RssmOnline<ExecSpace, real>& RssmDynamics::online() {
  if (!online_) online_ = std::make_unique<RssmOnline<ExecSpace, real>>(model_, reset_, training_);
  return *online_;
}

void RssmDynamics::for_each_parameter(const ParameterVisitor& fn) const {
  model_.params.for_each_tensor(
      [&](const std::string& name, real* data, const std::vector<std::size_t>& shape) {
        std::size_t count = 1;
        for (const auto e : shape) count *= e;
        fn(name, ParameterSpan(data, count), shape);
      });
}

void RssmDynamics::rollout(const RolloutInputs<real>& in, const RolloutSettings& settings,
                           const RolloutOutputs<real>& out) const {
  ensemble_rollout_auto(ExecSpace(), model_.params, reset_, model_.latents, in, settings, out,
                        &rollout_workspace_);
}

}  // namespace hpt
