#include "physics-style-modules/dynamics/register.hpp"

#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "physics-style-modules/dynamics/rssm.hpp"

namespace hpt {

void declare_dynamics_options(OptionSchema& schema) {
  add_style_choice<Dynamics>(
      schema, "dynamics", "rssm", register_dynamics_styles,
      "model of the training process that forecasts the loss (rssm_prototype: the "
      "prototype's, only with hybrid.controller = prototype)");
  schema.add_int("dynamics.members", 5, "ensemble members E", 1, 1024);
  schema.add_int("dynamics.hidden", 256, "GRU hidden size H of every member", 1, 16384);
  schema.add_int("dynamics.stochastic", 32, "size S of the stochastic state", 1, 1024);
  schema.add_int("dynamics.seed", 1, "seed of the parameter initialisation and rollout draws", 0);
  schema.add_int("dynamics.bptt", 16, "samples K of the truncated-BPTT window of online training",
                 1, 4096);
  schema.add_choice("dynamics.bptt_recurrence", "auto", {"auto", "team", "split"},
                    "how the BPTT runs its recurrences: one team per member, each member's step "
                    "split across teams, or auto (split on a GPU from H = 64)");
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
  // The prototype's RSSM has its own interface (PrototypeRssm): only the prototype's controller
  // builds it, so as a general forecaster it is refused by name.
  registry.add(
      "rssm_prototype",
      [](const Config&) -> std::unique_ptr<Dynamics> {
        throw InputError(
            "dynamics.style = 'rssm_prototype' (the prototype's RSSM) serves only the prototype's "
            "controller: set train.hybrid = on and hybrid.controller = prototype in a train or "
            "compare run, or use dynamics.style = rssm");
      },
      "the prototype's RSSM, for parity (built by hybrid.controller = prototype)");
}

double rssm_parameter_bytes(double E, double H, double I, double S) {
  return E * (3 * H * (I + H) + 6 * H + 2 * S * H + 2 * S + 2 * (H + S) + 2) * sizeof(real);
}

MemoryNeed rssm_training_memory(const Config& c, double runs) {
  const double E = double(c.get_int("dynamics.members")), H = double(c.get_int("dynamics.hidden"));
  const double S = double(c.get_int("dynamics.stochastic")), K = double(c.get_int("dynamics.bptt"));
  MemoryNeed need;
  need.bytes = 5 * rssm_parameter_bytes(E, H, kFeatures, S) +
               E * K * (11 * H + 6 * S) * sizeof(real) +
               runs * (K + 1) * (kFeatures + 1 + E * H) * sizeof(real);
  need.keys = "dynamics.members = " + std::to_string(c.get_int("dynamics.members")) +
              ", dynamics.hidden = " + std::to_string(c.get_int("dynamics.hidden")) +
              ", dynamics.bptt = " + std::to_string(c.get_int("dynamics.bptt"));
  return need;
}

}  // namespace hpt
