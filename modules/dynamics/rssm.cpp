#include "modules/dynamics/rssm.hpp"

#include <string>

#include "core/error.hpp"
#include "kernels/ensemble_rollout_dispatch.hpp"

namespace hpt {

RssmDynamics::RssmDynamics(int members, int hidden, int stochastic, int input, GruReset reset)
    : params_(members, hidden, stochastic, input),
      latents_("rssm.latents", members, hidden),
      reset_(reset) {
  HPT_REQUIRE(members >= 1 && hidden >= 1 && stochastic >= 1 && input >= 1,
              "RssmDynamics: every size must be positive");
}

RssmDynamics::RssmDynamics(const Config& config)
    : RssmDynamics(
          static_cast<int>(config.get_int("dynamics.members")),
          static_cast<int>(config.get_int("dynamics.hidden")),
          static_cast<int>(config.get_int("dynamics.stochastic")), kFeatures,
          config.get_string("gru.reset") == "before" ? GruReset::Before : GruReset::After) {
  initialize(static_cast<std::uint64_t>(config.get_int("dynamics.seed")));
}

void RssmDynamics::initialize(std::uint64_t seed) {
  initialize_rssm_params(ExecSpace(), params_, seed);
  Kokkos::deep_copy(ExecSpace(), latents_, real(0));
  ExecSpace().fence();
}

void RssmDynamics::for_each_parameter(const ParameterVisitor& fn) const {
  params_.for_each_tensor(
      [&](const std::string& name, real* data, const std::vector<std::size_t>& shape) {
        std::size_t count = 1;
        for (const auto e : shape) count *= e;
        fn(name, ParameterSpan(data, count), shape);
      });
}

void RssmDynamics::rollout(const RolloutInputs<real>& in, const RolloutSettings& settings,
                           const RolloutOutputs<real>& out) const {
  ensemble_rollout_auto(ExecSpace(), params_, reset_, latents_, in, settings, out);
}

}  // namespace hpt
