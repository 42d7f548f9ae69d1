#include "train/hybrid_controllers.hpp"

#include <memory>

#include "core/error.hpp"
#include "physics-style-modules/update/register.hpp"
#include "train/hybrid_options.hpp"
#include "train/hybrid_policy.hpp"
#include "train/prototype_policy.hpp"

namespace hpt::train {

namespace {

std::unique_ptr<StepPolicy> make_hpt_controller(const Config& c, const ControllerInputs& in) {
  Registry<UpdatePredictor> updates("update");
  register_update_styles(updates);
  return std::make_unique<HybridPolicy>(in.state, in.schedule, read_hybrid_settings(c),
                                        updates.create(c.get_string("update.style"), c),
                                        in.total_steps);
}

std::unique_ptr<StepPolicy> make_prototype_controller(const Config& c, const ControllerInputs& in) {
  HPT_REQUIRE(in.prototype_rssm != nullptr, "hybrid.controller = prototype without its RSSM");
  return std::make_unique<PrototypePolicy>(in.state, in.schedule, read_prototype_schedule(c),
                                           *in.prototype_rssm, read_hybrid_settings(c).monitor);
}

}  // namespace

void register_hybrid_controllers(ControllerRegistry& registry) {
  registry.add("hpt", make_hpt_controller,
               "verified predict blocks (docs/method.md#hybrid-training-loop)");
  registry.add("prototype", make_prototype_controller,
               "the prototype's schedule and confidence, for comparison");
}

bool uses_prototype_rssm(const std::string& controller) {
  return controller == "prototype";
}

}  // namespace hpt::train
