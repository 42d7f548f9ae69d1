#pragma once
// Dynamics style `rssm` (docs/method.md#rssm-ensemble, default): an ensemble of E recurrent
// state-space models, each a GRU with a Gaussian prior over a stochastic state and a Gaussian loss
// head. The parameters live in one flat ParameterStore; online() trains them
// (physics-style-modules/dynamics/rssm_online.hpp) and filters the latents the rollouts start from.
#include <cstdint>
#include <memory>

#include "core/config.hpp"
#include "kernels/rollout_workspace.hpp"
#include "kernels/rssm_params.hpp"
#include "physics-style-modules/dynamics/dynamics.hpp"
#include "physics-style-modules/dynamics/rssm_model.hpp"
#include "physics-style-modules/dynamics/rssm_online.hpp"

namespace hpt {

class RssmDynamics final : public Dynamics {
 public:
  RssmDynamics(int members, int hidden, int stochastic, int input, GruReset reset,
               const RssmTrainOptions& training = RssmTrainOptions());
  // From dynamics.members/hidden/stochastic, gru.reset and the training options; input
  // kFeatures; initialised with dynamics.seed.
  explicit RssmDynamics(const Config& config);

  std::string style() const override { return "rssm"; }
  int members() const override { return model_.params.members(); }
  int hidden() const override { return model_.params.hidden(); }
  int stochastic() const override { return model_.params.stochastic(); }
  int input() const override { return model_.params.input(); }
  GruReset gru_reset() const override { return reset_; }

  // Also forgets the online trainer's observations and optimizer state.
  void initialize(std::uint64_t seed) override;
  void for_each_parameter(const ParameterVisitor& fn) const override;
  View2<real> latents() const override { return model_.latents; }
  void rollout(const RolloutInputs<real>& in, const RolloutSettings& settings,
               const RolloutOutputs<real>& out) const override;

  const RssmParams<real>& params() const { return model_.params; }
  RssmModel<real>& model() { return model_; }
  // The online trainer; its buffers are allocated at the first call, so a run that only rolls
  // out does not hold optimizer state.
  RssmOnline<ExecSpace, real>& online();

 private:
  RssmModel<real> model_;
  GruReset reset_;
  RssmTrainOptions training_;
  std::unique_ptr<RssmOnline<ExecSpace, real>> online_;
  // The rollouts' device buffers, kept between calls (a cache: rollout() stays const).
  mutable RolloutWorkspace<real, ExecSpace::memory_space> rollout_workspace_;
};

}  // namespace hpt
