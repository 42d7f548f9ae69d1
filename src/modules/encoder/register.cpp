#include "modules/encoder/register.hpp"

#include <memory>

#include "modules/encoder/original.hpp"
#include "modules/encoder/rich.hpp"

namespace hpt {

void declare_encoder_options(OptionSchema& schema) {
  schema.add_choice("encoder.style", "rich", {"original", "rich"},
                    "training state -> 64 features: rich (default) or original (prototype parity)");
  schema.add_int("encoder.loss_history", 256, "capacity of the loss ring buffer (steps)", 1, 16384);
  schema.add_int("encoder.grad_history", 64,
                 "capacity of the gradient-norm, update-norm, update-cosine and weight-norm rings",
                 1, 4096);
  schema.add_real("encoder.clamp", 10.0,
                  "normalised features are clamped to [-clamp, clamp] (rich)", 1e-3, 1e6);
}

void register_encoder_styles(Registry<Encoder>& registry) {
  registry.add(
      "original", [](const Config& config) { return std::make_unique<OriginalEncoder>(config); },
      "the prototype's 26 features, unnormalised (parity mode)");
  registry.add(
      "rich", [](const Config& config) { return std::make_unique<RichEncoder>(config); },
      "64 informative features, running z-score normalised");
}

}  // namespace hpt
