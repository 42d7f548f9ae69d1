#pragma once
// Style `trend` on the rate clock (`update.trend_clock = rate`): the discounted least-squares line
// of `trend`, fitted against the learning rate summed over the real steps instead of their count,
// so that a predict block moves by the slope times the planned rates it spans (under a decaying
// schedule a late block moves less than the steps that were fitted; on a constant rate both clocks
// agree). With tau the rate summed over the observed steps, x_j = tau_t - tau_{t-j} and the weights
// beta^j of `trend` (beta = 1 - 1/lag), the sums S_p = sum_j beta^j x_j^p and the moments
// M0 = sum_j beta^j theta_{t-j}, M1 = sum_j beta^j x_j theta_{t-j} follow, when a step of rate r is
// observed, S0 <- 1 + beta S0, S1 <- beta (S1 + r S0), S2 <- beta (S2 + 2 r S1 + r^2 S0),
// M1 <- beta (M1 + r M0), M0 <- theta + beta M0. The moments are kept as m = g M (g = 1 - beta),
// zero-started EMAs of the size of theta; the sums are checkpointed with them.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/update_kernels.hpp"
#include "physics-style-modules/update/discounted_trend.hpp"
#include "physics-style-modules/update/update_predictor.hpp"

namespace hpt {

template <class Space, class Real>
class RateClockTrendPredictor final : public UpdatePredictorBase<Space, Real> {
  using base = UpdatePredictorBase<Space, Real>;

 public:
  RateClockTrendPredictor(int lag, bool fitted_origin)
      : lag_(lag), beta_(1.0 - 1.0 / double(lag)), fitted_origin_(fitted_origin) {
    HPT_REQUIRE(lag >= 2, "RateClockTrendPredictor: lag must be at least 2");
  }
  static int kept_copies(bool fitted_origin) { return fitted_origin ? 2 : 3; }
  std::string style() const override { return "trend"; }
  std::string summary() const override {
    return "trend (discounted least-squares line against the summed learning rate, time "
           "constant " +
           std::to_string(lag_) + " steps, from the " +
           (fitted_origin_ ? "fitted level" : "current parameters") + ")";
  }
  void begin_block() override {
    HPT_REQUIRE(this->ready(), "update trend: predict block before enough real steps");
    at_block_ = sums_;
  }
  void predict(int /*k*/) override {
    const double g = 1.0 - beta_, d = at_block_.s0 * at_block_.s2 - at_block_.s1 * at_block_.s1;
    double on_m0 = 1.0 / (g * at_block_.s0), on_m1 = 0.0, on_latest = 0.0;  // the fitted level
    if (!fitted_origin_) on_m0 = 0.0, on_latest = 1.0;                      // theta_t
    // Rates that never moved (all zero so far) leave no slope: the block stands still.
    if (d > 1e-12 * at_block_.s0 * at_block_.s2) {
      const DiscountedLine line =
          DiscountedLine::at(at_block_, this->block_rates(), fitted_origin_);
      on_m0 = line.on_m0 / g, on_m1 = line.on_m1 / g, on_latest = line.on_latest;
    }
    linear_combination<Space, Real>(this->space_, this->params_->values(), m0_, on_m0, m1_, on_m1,
                                    fitted_origin_ ? m0_ : latest_, on_latest);
  }
  std::vector<double> scalar_state() const override { return {sums_.s0, sums_.s1, sums_.s2}; }
  void load_scalar_state(const std::vector<double>& v) override {
    HPT_REQUIRE(v.size() == 3, "RateClockTrendPredictor: wrong scalar state size");
    sums_.s0 = v[0], sums_.s1 = v[1], sums_.s2 = v[2];
  }

 protected:
  int ring_capacity() const override { return 0; }
  long steps_needed() const override { return lag_; }
  void allocate_extra(const typename base::store_type& params) override {
    m0_ = params.make_buffer("hpt::update_trend_m0");
    m1_ = params.make_buffer("hpt::update_trend_m1");
    if (!fitted_origin_) latest_ = params.make_buffer("hpt::update_latest");
  }
  void after_observe() override {
    // The first observation since bind or reset starts the sums and moments from zero.
    const double keep = this->observed() == 1 ? 0.0 : beta_, g = 1.0 - beta_;
    const double r = this->observed() == 1 ? 0.0 : this->observed_rate();
    const DiscountedSums s = sums_;
    sums_.s0 = 1.0 + keep * s.s0;
    sums_.s1 = keep * (s.s1 + r * s.s0);
    sums_.s2 = keep * (s.s2 + 2.0 * r * s.s1 + r * r * s.s0);
    const auto& theta = this->params_->values();
    linear_combination<Space, Real>(this->space_, m1_, m1_, keep, m0_, keep * r, m0_, 0.0);
    linear_combination<Space, Real>(this->space_, m0_, m0_, keep, theta, g, theta, 0.0);
    if (!fitted_origin_) this->params_->snapshot(latest_);
  }
  // Every observed theta moved by D = theta - block_start: M0 by S0 D, M1 by S1 D (the sums of
  // the block's begin_block: nothing was observed since).
  void shift_extra(const typename base::buffer_type& block_start) override {
    const double g = 1.0 - beta_, a0 = g * at_block_.s0, a1 = g * at_block_.s1;
    const auto& theta = this->params_->values();
    linear_combination<Space, Real>(this->space_, m0_, m0_, 1.0, theta, a0, block_start, -a0);
    linear_combination<Space, Real>(this->space_, m1_, m1_, 1.0, theta, a1, block_start, -a1);
  }
  void append_extra(std::vector<typename base::NamedBuffer>& out) const override {
    out.push_back({"trend_m0", m0_});
    out.push_back({"trend_m1", m1_});
    if (!fitted_origin_) out.push_back({"latest", latest_});
  }

 private:
  int lag_;
  double beta_;
  bool fitted_origin_;
  DiscountedSums sums_, at_block_;  // of every observation so far; when the block began
  typename base::buffer_type m0_, m1_, latest_;
};

}  // namespace hpt
