#pragma once
// Styles `linear` and `quadratic` with `update.snapshots = anchors`: the finite-difference
// extrapolation with order + 2 parameter copies instead of order x lag + 1. An anchor is kept every
// d = `update.lag` real steps (observations 0, d, 2d, ...) and the newest observed parameters
// theta_t in a buffer of their own. A block at observation t skips the newest anchor (it may be t
// itself) and uses the next older ones, e1 = t - a1 (d <= e1 < 2d) and e2 = e1 + d steps back;
// the polynomial through theta_t, theta_a1 (and theta_a2) evaluated k steps ahead (Lagrange form):
//   linear:    theta(t+k) = theta_t + (k / e1) (theta_t - theta_a1)
//   quadratic: theta(t+k) = (1 - w1 - w2) theta_t + w1 theta_a1 + w2 theta_a2,
//              w1 = -k (k + e2) / (e1 (e2 - e1)),  w2 = k (k + e1) / (e2 (e2 - e1)).
// With e1 = d and e2 = 2d these are the formulas of finite_difference.hpp.
#include <string>

#include "kernels/update_kernels.hpp"
#include "physics-style-modules/update/update_predictor.hpp"

namespace hpt {

template <class Space, class Real>
class AnchoredDifferencePredictor final : public UpdatePredictorBase<Space, Real> {
  using base = UpdatePredictorBase<Space, Real>;

 public:
  // order 1 (linear) or 2 (quadratic); lag d >= 1.
  AnchoredDifferencePredictor(int order, int lag) : order_(order), lag_(lag) {
    HPT_REQUIRE((order == 1 || order == 2) && lag >= 1,
                "AnchoredDifferencePredictor: bad order/lag");
  }
  // order + 1 anchors and the newest parameters.
  static int kept_copies(int order) { return order + 2; }
  std::string style() const override { return order_ == 1 ? "linear" : "quadratic"; }
  std::string summary() const override {
    return style() + " (anchors every " + std::to_string(lag_) + " steps, differences over " +
           std::to_string(lag_) + "-" + std::to_string(2 * lag_ - 1) + " steps)";
  }
  void begin_block() override {
    HPT_REQUIRE(this->ready(), "update " + style() + ": predict block before enough real steps");
    const long t = this->observed() - 1;  // index of the newest observation
    const long anchor = (t / lag_ - 1) * lag_;
    span_ = double(t - anchor);
    t1_ = this->snapshot(1);
    t2_ = order_ == 2 ? this->snapshot(2) : t1_;
  }
  void predict(int k) override {
    const double e1 = span_, e2 = span_ + lag_, kk = double(k);
    double c1 = kk / e1, c2 = 0.0;
    if (order_ == 2) {
      // extrapolate_differences computes a + c1 (a - b) + c2 (a - 2 b + c): weights of b and c
      // are -c1 - 2 c2 and c2.
      const double w1 = -kk * (kk + e2) / (e1 * (e2 - e1)), w2 = kk * (kk + e1) / (e2 * (e2 - e1));
      c2 = w2;
      c1 = -w1 - 2.0 * w2;
    }
    extrapolate_differences<Space, Real>(this->space_, this->params_->values(), latest_, t1_, t2_,
                                         c1, c2);
  }
  // Steps between theta_t and the anchor a1 of the current block (e1).
  double span() const { return span_; }

 protected:
  int ring_capacity() const override { return order_ + 1; }
  bool keeps(long index) const override { return index % lag_ == 0; }
  long steps_needed() const override { return long(order_) * lag_ + 1; }
  void allocate_extra(const typename base::store_type& params) override {
    latest_ = params.make_buffer("hpt::update_latest");
  }
  // The newest parameters are refreshed by every observation, so a block's start is always the
  // newest real step (after an accepted block a Correct block of real steps refreshes it first).
  void after_observe() override { this->params_->snapshot(latest_); }
  void append_extra(std::vector<typename base::NamedBuffer>& out) const override {
    out.push_back({"latest", latest_});
  }

 private:
  int order_, lag_;
  double span_ = 1.0;
  typename base::buffer_type latest_, t1_, t2_;
};

}  // namespace hpt
