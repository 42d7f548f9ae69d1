#pragma once
// Styles `linear` and `quadratic`: finite differences of real parameter snapshots `lag` steps
// apart, extrapolated k steps ahead (Newton's backward-difference form, s = k / lag):
//   linear:    theta(t+k) = theta_t + s (theta_t - theta_{t-d})
//   quadratic: theta(t+k) = theta_t + s D1 + s (s + 1) / 2 D2,
//              D1 = theta_t - theta_{t-d}, D2 = theta_t - 2 theta_{t-d} + theta_{t-2d}.
#include <string>

#include "kernels/update_kernels.hpp"
#include "physics-style-modules/update/update_predictor.hpp"

namespace hpt {

template <class Space, class Real>
class FiniteDifferencePredictor final : public UpdatePredictorBase<Space, Real> {
  using base = UpdatePredictorBase<Space, Real>;

 public:
  // order 1 (linear) or 2 (quadratic); lag d >= 1.
  FiniteDifferencePredictor(int order, int lag) : order_(order), lag_(lag) {
    HPT_REQUIRE((order == 1 || order == 2) && lag >= 1, "FiniteDifferencePredictor: bad order/lag");
  }
  // Parameter snapshots kept: order * lag + 1.
  static int kept_copies(int order, int lag) { return order * lag + 1; }
  std::string style() const override { return order_ == 1 ? "linear" : "quadratic"; }
  std::string summary() const override {
    return style() + " (snapshots " + std::to_string(lag_) + " steps apart)";
  }
  void begin_block() override {
    HPT_REQUIRE(this->ready(), "update " + style() + ": predict block before enough real steps");
    t0_ = this->snapshot(0);
    t1_ = this->snapshot(lag_);
    t2_ = order_ == 2 ? this->snapshot(2 * lag_) : t1_;
  }
  void predict(int k) override {
    const double s = double(k) / double(lag_);
    extrapolate_differences<Space, Real>(this->space_, this->params_->values(), t0_, t1_, t2_, s,
                                         order_ == 2 ? s * (s + 1.0) / 2.0 : 0.0);
  }

 protected:
  int ring_capacity() const override { return kept_copies(order_, lag_); }
  long steps_needed() const override { return long(order_) * lag_ + 1; }

 private:
  int order_, lag_;
  typename base::buffer_type t0_, t1_, t2_;
};

}  // namespace hpt
