#pragma once
// The `sgd` optimizer style: SGD with momentum (dampening 0), optional Nesterov and weight decay
// added to the gradient, PyTorch semantics (kernels/optimizer_kernels.hpp sgd_step).
#include <string>

#include "core/config.hpp"
#include "physics-style-modules/optimizer/optimizer.hpp"

namespace hpt {

struct SgdOptions {
  double momentum = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
  double clip_norm = 0.0;  // <= 0: no clipping
};

// [optimizer] momentum, nesterov, weight_decay, clip_norm; InputError for Nesterov without
// momentum.
SgdOptions sgd_options_from_config(const Config& config);
void validate_sgd_options(const SgdOptions& options);
// e.g. "sgd momentum 0.9 nesterov, weight decay 0, clip 0"
std::string describe_sgd(const SgdOptions& options);

template <class Space, class Real>
class Sgd : public OptimizerBase<Space, Real> {
 public:
  using base = OptimizerBase<Space, Real>;
  using typename base::NamedBuffer;
  using typename base::store_type;

  explicit Sgd(const SgdOptions& options) : base(options.clip_norm), options_(options) {
    validate_sgd_options(options_);
  }
  const SgdOptions& options() const { return options_; }

  std::string summary() const override { return describe_sgd(options_); }

 protected:
  void allocate_state(const store_type& params) override {
    momentum_ = options_.momentum != 0.0 ? params.make_buffer("hpt::sgd_momentum")
                                         : typename base::buffer_type();
  }
  void append_state(std::vector<NamedBuffer>& out) const override {
    if (momentum_.extent(0) > 0) out.push_back(NamedBuffer{"momentum", momentum_});
  }
  typename base::buffer_type first_moment() const override { return momentum_; }
  MomentSummary update(double lr) override {
    SgdHyper h;
    h.lr = lr;
    h.momentum = options_.momentum;
    h.weight_decay = options_.weight_decay;
    h.nesterov = options_.nesterov;
    h.first_step = this->steps_ == 0;
    sgd_step<Space, Real>(this->space_, this->params_->values(), this->params_->gradients(),
                          momentum_, this->prev_update_, this->stats_, h, this->sums_);
    return MomentSummary::Sgd;
  }

 private:
  SgdOptions options_;
  typename base::buffer_type momentum_;
};

extern template class Sgd<ExecSpace, real>;

}  // namespace hpt
