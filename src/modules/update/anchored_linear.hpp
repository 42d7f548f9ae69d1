#pragma once
// Style `linear` with `update.snapshots = anchors`: the linear extrapolation with three parameter
// copies instead of lag + 1. An anchor is kept every d = `update.lag` real steps (observations 0,
// d, 2d, ...) and the newest observed parameters theta_t in a buffer of their own; a block
// extrapolates from the older of the two newest anchors, e = t - a steps back (d <= e < 2d):
//   theta(t+k) = theta_t + (k / e) (theta_t - theta_a).
#include <string>

#include "kernels/update_kernels.hpp"
#include "modules/update/update_predictor.hpp"

namespace hpt {

template <class Space, class Real>
class AnchoredLinearPredictor final : public UpdatePredictorBase<Space, Real> {
  using base = UpdatePredictorBase<Space, Real>;

 public:
  explicit AnchoredLinearPredictor(int lag) : lag_(lag) {
    HPT_REQUIRE(lag >= 1, "AnchoredLinearPredictor: lag must be at least 1");
  }
  static int kept_copies() { return 3; }  // two anchors and the newest parameters
  std::string style() const override { return "linear"; }
  std::string summary() const override {
    return "linear (anchors every " + std::to_string(lag_) + " steps, differences over " +
           std::to_string(lag_) + "-" + std::to_string(2 * lag_ - 1) + " steps)";
  }
  void begin_block() override {
    HPT_REQUIRE(this->ready(), "update linear: predict block before enough real steps");
    const long t = this->observed() - 1;  // index of the newest observation
    const long anchor = (t / lag_ - 1) * lag_;
    span_ = double(t - anchor);
    t1_ = this->snapshot(1);
  }
  void predict(int k) override {
    extrapolate_differences<Space, Real>(this->space_, this->params_->values(), latest_, t1_, t1_,
                                         double(k) / span_, 0.0);
  }
  // Steps between theta_t and the anchor the current block extrapolates from.
  double span() const { return span_; }

 protected:
  int ring_capacity() const override { return 2; }
  bool keeps(long index) const override { return index % lag_ == 0; }
  long steps_needed() const override { return long(lag_) + 1; }
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
  int lag_;
  double span_ = 1.0;
  typename base::buffer_type latest_, t1_;
};

}  // namespace hpt
