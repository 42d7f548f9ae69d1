#include "modules/dynamics/register.hpp"

#include <memory>

#include "modules/dynamics/rssm.hpp"

namespace hpt {

void declare_dynamics_options(OptionSchema& schema) {
  schema.add_choice("dynamics.style", "rssm", {"rssm", "rssm_original"},
                    "model of the training process that forecasts the loss (rssm_original: the "
                    "prototype's, only with hybrid.controller = original)");
  schema.add_int("dynamics.members", 5, "ensemble members E", 1, 1024);
  schema.add_int("dynamics.hidden", 256, "GRU hidden size H of every member", 1, 16384);
  schema.add_int("dynamics.stochastic", 32, "size S of the stochastic state", 1, 1024);
  schema.add_int("dynamics.seed", 1, "seed of the parameter initialisation and rollout draws", 0);
  schema.add_int("dynamics.bptt", 16, "samples K of the truncated-BPTT window of online training",
                 1, 4096);
  schema.add_real("dynamics.lr", 1e-3, "Adam learning rate of the online dynamics training", 0.0,
                  1.0);
  schema.add_real("dynamics.kl_weight", 1e-3,
                  "weight beta of the prior's KL to N(0, I) in the dynamics training loss", 0.0,
                  1e3);
  schema.add_real("dynamics.clip_norm", 5.0,
                  "global gradient-norm clip of the dynamics training (0: no clipping)", 0.0, 1e6);
  schema.add_choice("gru.reset", "after", {"after", "before"},
                    "reset gate after the recurrent product (PyTorch/cuDNN) or before (prototype)");
}

void register_dynamics_styles(Registry<Dynamics>& registry) {
  registry.add(
      "rssm", [](const Config& config) { return std::make_unique<RssmDynamics>(config); },
      "ensemble of GRU state-space models with Gaussian prior and loss heads");
}

}  // namespace hpt
