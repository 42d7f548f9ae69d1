#pragma once
// A copy, in device memory, of the parameters and the whole optimizer state (buffers and step
// count): what a predict block starts from and what a rollback or a critical alarm restores.
#include <cstdint>
#include <string>
#include <vector>

#include "physics-style-modules/model/model.hpp"
#include "physics-style-modules/optimizer/optimizer.hpp"
#include "train/state_registry.hpp"

namespace hpt::train {

class TrainingSnapshot {
 public:
  TrainingSnapshot(Model& model, Optimizer& optimizer);
  void take();
  void restore() const;
  bool taken() const { return taken_ != 0; }
  // The snapshot's parameters (the start of the current predict block).
  View1<real> parameters() const { return params_; }
  void declare_state(StateRegistry& registry, const std::string& prefix);

 private:
  Model& model_;
  Optimizer& optimizer_;
  View1<real> params_;
  std::vector<View1<real>> optimizer_state_;
  std::int64_t optimizer_steps_ = 0, taken_ = 0;
};

}  // namespace hpt::train
