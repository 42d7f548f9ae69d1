#pragma once
// The `adam` optimizer style: AdamW (bias-corrected moments, decoupled weight decay), PyTorch
// semantics (kernels/optimizer_kernels.hpp adamw_step).
#include <cmath>
#include <string>

#include "core/config.hpp"
#include "physics-style-modules/optimizer/optimizer.hpp"

namespace hpt {

struct AdamOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // decoupled (AdamW)
  double clip_norm = 0.0;     // <= 0: no clipping
};

// [optimizer] beta1, beta2, eps, weight_decay, clip_norm.
AdamOptions adam_options_from_config(const Config& config);
void validate_adam_options(const AdamOptions& options);
// e.g. "adamw beta1 0.9, beta2 0.999, eps 1e-08, weight decay 0.01, clip 1"
std::string describe_adam(const AdamOptions& options);

template <class Space, class Real>
class Adam : public OptimizerBase<Space, Real> {
 public:
  using base = OptimizerBase<Space, Real>;
  using typename base::NamedBuffer;
  using typename base::store_type;

  explicit Adam(const AdamOptions& options) : base(options.clip_norm), options_(options) {
    validate_adam_options(options_);
  }
  const AdamOptions& options() const { return options_; }

  std::string summary() const override { return describe_adam(options_); }

 protected:
  void allocate_state(const store_type& params) override {
    m_ = params.make_buffer("hpt::adam_m");
    v_ = params.make_buffer("hpt::adam_v");
  }
  void append_state(std::vector<NamedBuffer>& out) const override {
    out.push_back(NamedBuffer{"m", m_});
    out.push_back(NamedBuffer{"v", v_});
  }
  typename base::buffer_type first_moment() const override { return m_; }
  MomentSummary update(double lr) override {
    AdamHyper h;
    h.lr = lr;
    h.beta1 = options_.beta1;
    h.beta2 = options_.beta2;
    h.eps = options_.eps;
    h.weight_decay = options_.weight_decay;
    h.step = this->steps_ + 1;
    adamw_step<Space, Real>(this->space_, this->params_->values(), this->params_->gradients(), m_,
                            v_, this->prev_update_, this->stats_, h, this->sums_);
    return MomentSummary::Adam;
  }
  void fill_powers(StepTelemetry& t) const override {
    t.beta1_power = std::pow(options_.beta1, double(this->steps_));
    t.beta2_power = std::pow(options_.beta2, double(this->steps_));
    // The step size Adam applied, bias corrections included (t = steps_ after this update).
    if (this->steps_ > 0)
      t.effective_lr = t.lr * std::sqrt(1.0 - t.beta2_power) / (1.0 - t.beta1_power);
  }

 private:
  AdamOptions options_;
  typename base::buffer_type m_, v_;
};

extern template class Adam<ExecSpace, real>;

}  // namespace hpt
