#include "train/training_snapshot.hpp"

namespace hpt::train {

TrainingSnapshot::TrainingSnapshot(Model& model, Optimizer& optimizer)
    : model_(model), optimizer_(optimizer) {
  params_ = model_.parameters().make_buffer("hpt::snapshot_parameters");
  for (const auto& b : optimizer_.state_views())
    optimizer_state_.push_back(View1<real>("hpt::snapshot_" + b.name, b.view.extent(0)));
}

void TrainingSnapshot::take() {
  model_.parameters().snapshot(params_);
  const auto views = optimizer_.state_views();
  for (std::size_t i = 0; i < views.size(); ++i)
    Kokkos::deep_copy(optimizer_state_[i], views[i].view);
  optimizer_steps_ = optimizer_.step_count();
  taken_ = 1;
}

void TrainingSnapshot::restore() const {
  HPT_REQUIRE(taken(), "TrainingSnapshot::restore before take()");
  model_.parameters().restore(params_);
  const auto views = optimizer_.state_views();
  for (std::size_t i = 0; i < views.size(); ++i)
    Kokkos::deep_copy(views[i].view, optimizer_state_[i]);
  optimizer_.set_step_count(long(optimizer_steps_));
}

void TrainingSnapshot::declare_state(StateRegistry& registry, const std::string& prefix) {
  registry.add_view(prefix + "parameters", params_);
  const auto views = optimizer_.state_views();
  for (std::size_t i = 0; i < views.size(); ++i)
    registry.add_view(prefix + "optimizer_" + views[i].name, optimizer_state_[i]);
  registry.add_int(
      prefix + "optimizer_steps", [this] { return optimizer_steps_; },
      [this](std::int64_t v) { optimizer_steps_ = v; });
  registry.add_int(
      prefix + "taken", [this] { return taken_; }, [this](std::int64_t v) { taken_ = v; });
}

}  // namespace hpt::train
