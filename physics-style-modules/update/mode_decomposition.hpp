#pragma once
// Style `dmd`: the parameter trajectory advanced in the low-dimensional subspace of its own recent
// displacements by dynamic mode decomposition (dmd_fit.hpp). An anchor is kept every d =
// `update.lag` real steps (observations 0, d, 2d, ...), the newest n = `update.dmd_anchors` of them
// in a ring, and the newest parameters theta_t in a buffer of their own. At a block's start the
// Gram matrix of the n - 1 displacements between consecutive anchors is reduced on the device in
// one pass; the host fits the rank-r (r = `update.dmd_rank`) operator that maps each displacement
// to the next, its spectral radius capped at 1. The prediction k steps ahead is
//   theta(t+k) = theta_t + sum_{j=1..k/d} (the predicted displacement j anchor spacings ahead),
// the last spacing taken in proportion: a linear combination of the anchors added to theta_t. With
// one mode and equal displacements it is the linear extrapolation of the anchors; a decaying or
// rotating motion in the subspace is followed as the fit finds it. The displacements are measured
// from the anchors, so theta_t may be up to d - 1 steps past the newest anchor.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/anchor_kernels.hpp"
#include "physics-style-modules/update/dmd_fit.hpp"
#include "physics-style-modules/update/update_predictor.hpp"

namespace hpt {

template <class Space, class Real>
class DmdPredictor final : public UpdatePredictorBase<Space, Real> {
  using base = UpdatePredictorBase<Space, Real>;

 public:
  // lag d >= 1; anchors n in [3, kMaxAnchors]; rank r in [1, n - 2].
  DmdPredictor(int lag, int anchors, int rank) : lag_(lag), anchors_(anchors), rank_(rank) {
    HPT_REQUIRE(
        lag >= 1 && anchors >= 3 && anchors <= kMaxAnchors && rank >= 1 && rank <= anchors - 2,
        "DmdPredictor: bad lag, anchor count or rank");
  }
  // The anchors and the newest parameters.
  static int kept_copies(int anchors) { return anchors + 1; }
  std::string style() const override { return "dmd"; }
  std::string summary() const override {
    return "dmd (rank " + std::to_string(rank_) + " of " + std::to_string(anchors_ - 1) +
           " displacements, anchors every " + std::to_string(lag_) + " steps)";
  }
  void begin_block() override {
    HPT_REQUIRE(this->ready(), "update dmd: predict block before enough real steps");
    order_ = anchor_order();
    const std::int64_t n = std::int64_t(this->params_->size());
    const std::vector<double> gram = displacement_gram<Space, Real>(this->space_, ring_, n, order_);
    fit_ = fit_dmd(gram, anchors_ - 1, rank_, 1.0);
  }
  void predict(int k) override {
    // Coefficients w over y_1 .. y_m-1 (y_i = a_i+1 - a_i) become coefficients of the anchors.
    const std::vector<double> w = fit_.motion(double(k) / double(lag_));
    AnchorTerms terms = order_;
    for (int i = 0; i < terms.count; ++i) terms.coef[i] = 0.0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      terms.coef[i + 1] += w[i];
      terms.coef[i] -= w[i];
    }
    add_anchor_combination<Space, Real>(this->space_, this->params_->values(), latest_, ring_,
                                        terms);
  }
  const DmdFit& fit() const { return fit_; }

 protected:
  int ring_capacity() const override { return 0; }  // the anchors live in one flat buffer
  long steps_needed() const override { return long(anchors_ - 1) * lag_ + 1; }
  void allocate_extra(const typename base::store_type& params) override {
    latest_ = params.make_buffer("hpt::update_latest");
    ring_ = typename base::buffer_type("hpt::update_dmd_anchors", params.size() * anchors_);
  }
  void after_observe() override {
    this->params_->snapshot(latest_);
    const long index = this->observed() - 1;
    if (index % lag_ != 0) return;
    const std::size_t n = this->params_->size(), slot = std::size_t((index / lag_) % anchors_);
    Kokkos::deep_copy(this->space_,
                      Kokkos::subview(ring_, Kokkos::make_pair(slot * n, (slot + 1) * n)),
                      this->params_->values());
  }
  // An accepted block moved the parameters by D = theta - block_start: every anchor moves by D,
  // so the displacements between anchors stay those of real steps.
  void shift_extra(const typename base::buffer_type& block_start) override {
    shift_anchors<Space, Real>(this->space_, ring_, this->params_->values(), block_start, anchors_);
  }
  void append_extra(std::vector<typename base::NamedBuffer>& out) const override {
    out.push_back({"latest", latest_});
    out.push_back({"dmd_anchors", ring_});
  }

 private:
  // The n newest anchors, oldest first.
  AnchorTerms anchor_order() const {
    AnchorTerms o;
    o.count = anchors_;
    const long newest = (this->observed() - 1) / lag_;
    for (int i = 0; i < anchors_; ++i) o.slot[i] = int((newest - (anchors_ - 1) + i) % anchors_);
    return o;
  }

  int lag_, anchors_, rank_;
  AnchorTerms order_;
  DmdFit fit_;
  typename base::buffer_type latest_, ring_;
};

}  // namespace hpt
