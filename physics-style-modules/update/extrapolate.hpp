#pragma once
// Style `extrapolate`: per tensor, the predicted update at lead k is c * rho^k * m, where m is the
// bias-corrected EMA of the real updates and (c, rho) are fitted by least squares to the real
// updates of the newest real steps: a_j = <u_j, m> / <m, m> (the update j steps back, projected on
// m), log a_j = log c - j log rho. So theta(t+k) = theta_t + m * sum_{i=1..k} c rho^i. rho is
// clamped to [0, 1] (a decaying or steady step, never a growing one); when some a_j <= 0 the fit
// falls back to rho = 1, c = max(0, mean a_j).
#include <Kokkos_Core.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/update_kernels.hpp"
#include "physics-style-modules/update/update_predictor.hpp"

namespace hpt {

// (c, rho) of a_j ~ c rho^(-j), j = 0 (newest) .. n-1, per the rules above.
struct GeometricFit {
  double c = 0.0, rho = 1.0;
  // sum_{i=1..k} c rho^i
  double cumulative(int k) const {
    if (rho >= 1.0) return c * k;
    return c * rho * (1.0 - std::pow(rho, k)) / (1.0 - rho);
  }
};

inline GeometricFit fit_geometric(const std::vector<double>& a) {
  GeometricFit f;
  if (a.empty()) return f;
  bool positive = a.size() >= 2;
  double mean = 0;
  for (double v : a) positive = positive && v > 0.0, mean += v / double(a.size());
  if (!positive) {
    f.c = std::fmax(0.0, mean);
    return f;
  }
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = double(a.size());
  for (std::size_t j = 0; j < a.size(); ++j) {
    const double x = -double(j), y = std::log(a[j]);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  f.rho = std::fmin(1.0, std::exp(slope));
  // Intercept refitted for the clamped rho: mean of log a_j + j log rho.
  double li = 0;
  for (std::size_t j = 0; j < a.size(); ++j)
    li += (std::log(a[j]) + double(j) * std::log(f.rho)) / n;
  f.c = std::exp(li);
  return f;
}

template <class Space, class Real>
class ExtrapolatePredictor final : public UpdatePredictorBase<Space, Real> {
  using base = UpdatePredictorBase<Space, Real>;
  using mem = typename Space::memory_space;

 public:
  // fit_steps >= 1 real updates in the fit; beta: EMA decay of the real updates.
  ExtrapolatePredictor(int fit_steps, double beta) : fit_steps_(fit_steps), beta_(beta) {
    HPT_REQUIRE(fit_steps >= 1 && beta >= 0.0 && beta < 1.0, "ExtrapolatePredictor: bad settings");
  }
  // Parameter-sized buffers kept: fit_steps + 1 snapshots, the EMA, the mean update, a zero buffer.
  static int kept_copies(int fit_steps) { return fit_steps + 1 + 3; }
  std::string style() const override { return "extrapolate"; }
  std::string summary() const override {
    return "extrapolate (fit on " + std::to_string(fit_steps_) + " updates, EMA " +
           std::to_string(beta_) + ")";
  }
  void begin_block() override {
    HPT_REQUIRE(this->ready(), "update extrapolate: predict block before enough real steps");
    const long updates = this->observed() - 1;
    t0_ = this->snapshot(0);
    // m = ema / (1 - beta^n): the bias-corrected EMA.
    const double correction = 1.0 / (1.0 - std::pow(beta_, double(updates)));
    copy_scaled<Space, Real>(this->space_, mbar_, ema_, correction);
    const auto& chunks = this->params_->chunks();
    const int tensors = this->params_->num_tensors();
    tensor_dots<Space, Real>(this->space_, mbar_, zero_, mbar_, chunks, dots_);
    const auto mm = host_copy(dots_);
    const int fit = int(std::min<long>(fit_steps_, updates));
    std::vector<std::vector<double>> a(static_cast<std::size_t>(tensors));
    for (int j = 0; j < fit; ++j) {
      tensor_dots<Space, Real>(this->space_, this->snapshot(j), this->snapshot(j + 1), mbar_,
                               chunks, dots_);
      const auto uj = host_copy(dots_);
      for (int t = 0; t < tensors; ++t)
        a[std::size_t(t)].push_back(mm[std::size_t(t)] > 0 ? uj[std::size_t(t)] / mm[std::size_t(t)]
                                                           : 0.0);
    }
    fits_.clear();
    for (const auto& at : a) fits_.push_back(fit_geometric(at));
  }
  void predict(int k) override {
    auto coef_host = Kokkos::create_mirror_view(coef_);
    for (std::size_t t = 0; t < fits_.size(); ++t) coef_host(t) = fits_[t].cumulative(k);
    Kokkos::deep_copy(coef_, coef_host);
    step_along_per_tensor<Space, Real>(this->space_, this->params_->values(), t0_, mbar_, coef_,
                                       this->params_->chunks());
  }
  const std::vector<GeometricFit>& fits() const { return fits_; }

 protected:
  int ring_capacity() const override { return fit_steps_ + 1; }
  long steps_needed() const override { return 2; }
  void allocate_extra(const typename base::store_type& params) override {
    ema_ = params.make_buffer("hpt::update_ema");
    mbar_ = params.make_buffer("hpt::update_mean");
    zero_ = params.make_buffer("hpt::update_zero");
    dots_ = View1<double, mem>("hpt::update_dots", std::size_t(params.num_tensors()));
    coef_ = View1<double, mem>("hpt::update_coef", std::size_t(params.num_tensors()));
  }
  void after_observe() override {
    if (this->observed() >= 2)
      ema_of_difference<Space, Real>(this->space_, ema_, this->snapshot(0), this->snapshot(1),
                                     beta_);
  }
  void append_extra(std::vector<typename base::NamedBuffer>& out) const override {
    out.push_back({"ema", ema_});
  }

 private:
  static std::vector<double> host_copy(const View1<double, mem>& v) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    return std::vector<double>(h.data(), h.data() + h.extent(0));
  }

  int fit_steps_;
  double beta_;
  typename base::buffer_type t0_, ema_, mbar_, zero_;
  View1<double, mem> dots_, coef_;
  std::vector<GeometricFit> fits_;
};

}  // namespace hpt
