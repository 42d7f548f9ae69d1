#pragma once
// Style `none`: the parameters stay where the last real step left them during a predict block (the
// "freeze" arm of the honest comparison, and what the prototype did in effect).
#include <string>

#include "physics-style-modules/update/update_predictor.hpp"

namespace hpt {

template <class Space, class Real>
class FrozenPredictor final : public UpdatePredictorBase<Space, Real> {
 public:
  std::string style() const override { return "none"; }
  void begin_block() override {}
  void predict(int) override {}

 protected:
  int ring_capacity() const override { return 0; }
  long steps_needed() const override { return 0; }
};

}  // namespace hpt
