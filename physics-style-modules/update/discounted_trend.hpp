#pragma once
// Style `trend`: per parameter, a straight line fitted by discounted least squares to every real
// step observed since the last reset, the step j back weighted beta^j with beta = 1 - 1/lag (lag =
// `update.lag`, the fit's time constant). With the sums S_p = sum_j j^p beta^j and the moments
// M0 = sum_j beta^j theta_{t-j}, M1 = sum_j j beta^j theta_{t-j}, the line theta_{t-j} ~ a + c j
// has a = (S2 M0 - S1 M1) / D and c = (S0 M1 - S1 M0) / D, D = S0 S2 - S1^2, and predicts
//   origin fitted:  theta(t+k) = a - c k          (the smoothed level and the slope)
//   origin current: theta(t+k) = theta_t - c k    (the slope only, from the newest parameters).
// Rather than M0 and M1 (of size lag and lag^2 times theta), two zero-started EMAs of size theta
// are kept: e1 = EMA(theta), e2 = EMA(e1), both with decay beta; then M0 = e1 / g and
// M1 = e2 / g^2 - e1 / g with g = 1 - beta (Brown's double exponential smoothing, with the finite
// sums instead of their limits so that the fit is exact from the first steps on).
#include <string>

#include "core/error.hpp"
#include "kernels/update_kernels.hpp"
#include "physics-style-modules/update/update_predictor.hpp"

namespace hpt {

// S_p = sum_{j=0..n-1} j^p beta^j for p = 0, 1, 2 (terms below 1e-300 dropped).
struct DiscountedSums {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0;
  static DiscountedSums of(double beta, long n) {
    DiscountedSums s;
    double w = 1.0;
    for (long j = 0; j < n && w > 1e-300; ++j, w *= beta) {
      const double x = double(j);
      s.s0 += w, s.s1 += w * x, s.s2 += w * x * x;
    }
    return s;
  }
};

// The weights that turn the two EMAs (and theta_t) into the prediction k steps ahead, from the
// sums of the observations seen.
struct DiscountedTrendWeights {
  double on_e1 = 0.0, on_e2 = 0.0, on_latest = 0.0;

  static DiscountedTrendWeights at(double beta, const DiscountedSums& s, int k,
                                   bool fitted_origin) {
    const double d = s.s0 * s.s2 - s.s1 * s.s1, g = 1.0 - beta, kk = double(k);
    HPT_REQUIRE(d > 0.0, "DiscountedTrendWeights: fewer than two distinct observations");
    DiscountedTrendWeights out;
    // The prediction is A M0 + B M1 (+ theta_t); then M0 and M1 are written with e1 and e2.
    double a = kk * s.s1 / d, b = -kk * s.s0 / d;  // current: theta_t - c k
    if (fitted_origin)
      a = (s.s2 + s.s1 * kk) / d, b = -(s.s1 + s.s0 * kk) / d;  // fitted: a - c k
    else
      out.on_latest = 1.0;
    out.on_e1 = (a - b) / g;
    out.on_e2 = b / (g * g);
    return out;
  }
};

template <class Space, class Real>
class DiscountedTrendPredictor final : public UpdatePredictorBase<Space, Real> {
  using base = UpdatePredictorBase<Space, Real>;

 public:
  // lag >= 2: the time constant of the discount (beta = 1 - 1 / lag); fitted_origin: start the
  // line at the fitted level, else at the newest parameters.
  DiscountedTrendPredictor(int lag, bool fitted_origin)
      : lag_(lag), beta_(1.0 - 1.0 / double(lag)), fitted_origin_(fitted_origin) {
    HPT_REQUIRE(lag >= 2, "DiscountedTrendPredictor: lag must be at least 2");
  }
  // The two EMAs, and the newest parameters with origin current.
  static int kept_copies(bool fitted_origin) { return fitted_origin ? 2 : 3; }
  std::string style() const override { return "trend"; }
  std::string summary() const override {
    return "trend (discounted least-squares line, time constant " + std::to_string(lag_) +
           " steps, from the " + (fitted_origin_ ? "fitted level" : "current parameters") + ")";
  }
  void begin_block() override {
    HPT_REQUIRE(this->ready(), "update trend: predict block before enough real steps");
    sums_ = DiscountedSums::of(beta_, this->observed());
  }
  void predict(int k) override {
    const auto w = DiscountedTrendWeights::at(beta_, sums_, k, fitted_origin_);
    linear_combination<Space, Real>(this->space_, this->params_->values(), e1_, w.on_e1, e2_,
                                    w.on_e2, fitted_origin_ ? e1_ : latest_, w.on_latest);
  }

 protected:
  int ring_capacity() const override { return 0; }
  long steps_needed() const override { return lag_; }
  void allocate_extra(const typename base::store_type& params) override {
    e1_ = params.make_buffer("hpt::update_trend_e1");
    e2_ = params.make_buffer("hpt::update_trend_e2");
    if (!fitted_origin_) latest_ = params.make_buffer("hpt::update_latest");
  }
  void after_observe() override {
    // The first observation since bind or reset starts both EMAs from zero.
    const double keep = this->observed() == 1 ? 0.0 : beta_, g = 1.0 - beta_;
    const auto& theta = this->params_->values();
    linear_combination<Space, Real>(this->space_, e1_, e1_, keep, theta, g, theta, 0.0);
    linear_combination<Space, Real>(this->space_, e2_, e2_, keep, e1_, g, e1_, 0.0);
    if (!fitted_origin_) this->params_->snapshot(latest_);
  }
  // Every observed theta moved by D = theta - block_start: M0 by S0 D, M1 by S1 D (the sums of
  // the block's begin_block: nothing was observed since).
  void shift_extra(const typename base::buffer_type& block_start) override {
    const DiscountedSums& s = sums_;
    const double g = 1.0 - beta_, m0 = g * s.s0, m1 = g * g * (s.s1 + s.s0);
    const auto& theta = this->params_->values();
    linear_combination<Space, Real>(this->space_, e1_, e1_, 1.0, theta, m0, block_start, -m0);
    linear_combination<Space, Real>(this->space_, e2_, e2_, 1.0, theta, m1, block_start, -m1);
  }
  void append_extra(std::vector<typename base::NamedBuffer>& out) const override {
    out.push_back({"trend_e1", e1_});
    out.push_back({"trend_e2", e2_});
    if (!fitted_origin_) out.push_back({"latest", latest_});
  }

 private:
  int lag_;
  double beta_;
  bool fitted_origin_;
  DiscountedSums sums_;  // of the observations when the block began
  typename base::buffer_type e1_, e2_, latest_;
};

}  // namespace hpt
