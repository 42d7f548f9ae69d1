#include "physics-style-modules/optimizer/register.hpp"

#include <memory>
#include <string>
#include <vector>

#include "physics-style-modules/optimizer/adam.hpp"
#include "physics-style-modules/optimizer/sgd.hpp"

namespace hpt {

void declare_optimizer_options(OptionSchema& schema) {
  add_style_choice<Optimizer>(schema, "optimizer", "sgd", register_optimizer_styles,
                              "optimizer of the model: sgd (momentum, nesterov) or adam (AdamW)");
  schema.add_real("optimizer.lr", 0.05, "base learning rate (shaped by [schedule])", 0.0);
  schema.add_real("optimizer.momentum", 0.9, "sgd momentum mu (dampening 0)", 0.0, 0.999999);
  schema.add_bool("optimizer.nesterov", false, "sgd Nesterov momentum (needs momentum > 0)");
  schema.add_real("optimizer.weight_decay", 0.0,
                  "weight decay: added to the gradient (sgd) or decoupled (adam, AdamW)", 0.0);
  schema.add_real("optimizer.beta1", 0.9, "adam first-moment decay", 0.0, 0.999999);
  schema.add_real("optimizer.beta2", 0.999, "adam second-moment decay", 0.0, 0.999999999);
  schema.add_real("optimizer.eps", 1e-8, "adam epsilon added to sqrt(v_hat)", 1e-30);
  schema.add_real("optimizer.clip_norm", 0.0,
                  "clip the gradient to this global L2 norm before the update (0: off)", 0.0);
}

void register_optimizer_styles(Registry<Optimizer>& registry) {
  registry.add(
      "sgd",
      [](const Config& config) -> std::unique_ptr<Optimizer> {
        return std::make_unique<Sgd<ExecSpace, real>>(sgd_options_from_config(config));
      },
      "SGD with momentum, Nesterov and weight decay (PyTorch semantics)");
  registry.add(
      "adam",
      [](const Config& config) -> std::unique_ptr<Optimizer> {
        return std::make_unique<Adam<ExecSpace, real>>(adam_options_from_config(config));
      },
      "AdamW: bias-corrected Adam with decoupled weight decay (PyTorch semantics)");
}

}  // namespace hpt
