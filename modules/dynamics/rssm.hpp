#pragma once
// Dynamics style `rssm` (SPEC 4, default): an ensemble of E recurrent state-space models, each a
// GRU with a Gaussian prior over a stochastic state and a Gaussian loss head. Training comes later;
// this class holds the parameters and the latents and runs rollouts.
#include <cstdint>

#include "core/config.hpp"
#include "kernels/rssm_params.hpp"
#include "modules/dynamics/dynamics.hpp"

namespace hpt {

class RssmDynamics final : public Dynamics {
 public:
  RssmDynamics(int members, int hidden, int stochastic, int input, GruReset reset);
  // From dynamics.members/hidden/stochastic, gru.reset; input kFeatures; initialised with
  // dynamics.seed.
  explicit RssmDynamics(const Config& config);

  std::string style() const override { return "rssm"; }
  int members() const override { return params_.members(); }
  int hidden() const override { return params_.hidden(); }
  int stochastic() const override { return params_.stochastic(); }
  int input() const override { return params_.input(); }
  GruReset gru_reset() const override { return reset_; }

  void initialize(std::uint64_t seed) override;
  void for_each_parameter(const ParameterVisitor& fn) const override;
  View2<real> latents() const override { return latents_; }
  void rollout(const RolloutInputs<real>& in, const RolloutSettings& settings,
               const RolloutOutputs<real>& out) const override;

  const RssmParams<real>& params() const { return params_; }

 private:
  RssmParams<real> params_;
  View2<real> latents_;  // (E, H)
  GruReset reset_;
};

}  // namespace hpt
