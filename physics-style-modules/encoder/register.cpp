#include "physics-style-modules/encoder/register.hpp"

#include <memory>
#include <string>
#include <vector>

#include "physics-style-modules/encoder/prototype.hpp"
#include "physics-style-modules/encoder/rich.hpp"

namespace hpt {

void declare_encoder_options(OptionSchema& schema) {
  add_style_choice<Encoder>(
      schema, "encoder", "rich", register_encoder_styles,
      "training state -> 64 features: rich (default) or prototype (the earlier "
      "prototype's features, for parity)");
  schema.add_int("encoder.loss_history", 256, "capacity of the loss ring buffer (steps)", 1, 16384);
  schema.add_int("encoder.grad_history", 64,
                 "capacity of the gradient-norm, update-norm, update-cosine and weight-norm rings",
                 1, 4096);
  schema.add_real("encoder.clamp", 10.0,
                  "normalised features are clamped to [-clamp, clamp] (rich)", 1e-3, 1e6);
}

void register_encoder_styles(Registry<Encoder>& registry) {
  registry.add(
      "prototype", [](const Config& config) { return std::make_unique<PrototypeEncoder>(config); },
      "the prototype's 26 features, unnormalised (parity mode)");
  registry.add(
      "rich", [](const Config& config) { return std::make_unique<RichEncoder>(config); },
      "64 informative features, running z-score normalised");
}

double encoder_history_bytes(const Config& c, double runs) {
  const double loss = double(c.get_int("encoder.loss_history"));
  const double other = double(c.get_int("encoder.grad_history"));
  return runs * (loss + 16 * other + 64) * sizeof(real) + runs * 2 * kFeatures * sizeof(real);
}

}  // namespace hpt
