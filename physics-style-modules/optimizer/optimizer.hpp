#pragma once
// The `Optimizer` style interface. An optimizer is bound to a model's flat ParameterStore and keeps
// its state (momentum, Adam moments, the previous update) in flat buffers of the same layout.
// step(lr) runs, on the device: per-tensor and global gradient norms, clip-by-global-norm, the
// style's update kernel, and the telemetry of docs/method.md#telemetry, and fetches the telemetry
// to the host once.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/types.hpp"
#include "kernels/optimizer_kernels.hpp"
#include "kernels/parameter_store.hpp"

namespace hpt {

// What one step reports (docs/method.md#telemetry). Norms in double.
struct StepTelemetry {
  bool applied = false;      // false when the gradient norm was not finite: nothing was changed
  long step = 0;             // step_count() after this step
  double lr = 0.0;           // learning rate used
  double grad_norm = 0.0;    // global gradient L2 norm, before clipping
  double clip_scale = 1.0;   // factor applied to the gradient (1: not clipped)
  double update_norm = 0.0;  // ||theta_new - theta_old||
  double weight_norm = 0.0;  // ||theta_new||
  double update_cos = 0.0;   // cosine between this update and the previous one (0 on the first)
  double moment1 = 0.0;      // SGD: momentum-buffer L2 norm; Adam: mean |m|
  double moment2 = 0.0;      // SGD: 0; Adam: mean v
  double moment1_std = 0.0;  // SGD: std of |momentum buffer| over elements; Adam: std of |m|
  double moment2_std = 0.0;  // SGD: 0; Adam: std of v
  double effective_lr =
      0.0;  // Adam: lr * sqrt(1 - beta2^t) / (1 - beta1^t) (bias-corrected); SGD: lr
  double beta1_power = 0.0;               // Adam: beta1^t; SGD: 0
  double beta2_power = 0.0;               // Adam: beta2^t; SGD: 0
  std::vector<double> tensor_grad_norms;  // per tensor of the store, before clipping
};

template <class Space, class Real>
class OptimizerBase {
 public:
  using execution_space = Space;
  using memory_space = typename Space::memory_space;
  using store_type = ParameterStore<Real, memory_space>;
  using buffer_type = View1<Real, memory_space>;
  struct NamedBuffer {
    std::string name;
    buffer_type view;
  };

  // clip_norm <= 0: no clipping.
  explicit OptimizerBase(double clip_norm) : clip_norm_(clip_norm) {}
  virtual ~OptimizerBase() = default;
  OptimizerBase(const OptimizerBase&) = delete;
  OptimizerBase& operator=(const OptimizerBase&) = delete;

  virtual std::string summary() const = 0;

  // Binds to `params` (allocated) and allocates zeroed state; the step counter starts at 0.
  void bind(store_type& params) {
    HPT_REQUIRE(params.allocated(), "Optimizer::bind before the parameters were allocated");
    params_ = &params;
    prev_update_ = params.make_buffer("hpt::prev_update");
    stats_ = View1<double, memory_space>("hpt::step_telemetry",
                                         std::size_t(kTelemetrySlots + params.num_tensors()));
    stats_host_ = Kokkos::create_mirror_view(stats_);
    sums_ = Kokkos::View<UpdateSums, memory_space>("hpt::update_sums");
    allocate_state(params);
    steps_ = 0;
  }
  bool bound() const { return params_ != nullptr; }

  // One update of parameters().values() from parameters().gradients() with learning rate `lr`.
  StepTelemetry step(double lr) {
    HPT_REQUIRE(params_ != nullptr, "Optimizer::step before bind()");
    const int tensors = params_->num_tensors();
    auto tensor_sq = Kokkos::subview(
        stats_, std::make_pair(int(kTelemetrySlots), int(kTelemetrySlots) + tensors));
    tensor_sq_norms<Space, Real>(space_, params_->gradients(), params_->chunks(), tensor_sq);
    finish_gradient_norms<Space>(space_, stats_, tensors, clip_norm_);
    const MomentSummary kind = update(lr);
    finish_update_telemetry<Space>(space_, sums_, stats_, std::int64_t(params_->size()), kind);
    Kokkos::deep_copy(space_, stats_host_, stats_);
    space_.fence();

    StepTelemetry t;
    t.applied = std::isfinite(stats_host_(kGradNorm));
    if (t.applied) ++steps_;
    t.step = steps_;
    t.lr = lr;
    t.grad_norm = stats_host_(kGradNorm);
    t.clip_scale = stats_host_(kClipScale);
    t.update_norm = stats_host_(kUpdateNorm);
    t.weight_norm = stats_host_(kWeightNorm);
    t.update_cos = stats_host_(kUpdateCos);
    t.moment1 = stats_host_(kMoment1);
    t.moment2 = stats_host_(kMoment2);
    t.moment1_std = stats_host_(kMoment1Std);
    t.moment2_std = stats_host_(kMoment2Std);
    t.effective_lr = lr;
    fill_powers(t);
    t.tensor_grad_norms.resize(std::size_t(tensors));
    for (int i = 0; i < tensors; ++i)
      t.tensor_grad_norms[std::size_t(i)] = stats_host_(kTelemetrySlots + i);
    return t;
  }

  // Number of applied steps (Adam's t); part of the state for checkpoints and rollbacks.
  long step_count() const { return steps_; }
  void set_step_count(long steps) { steps_ = steps; }
  double clip_norm() const { return clip_norm_; }

  // Every state buffer by name (the style's, then "prev_update"), for snapshots and checkpoints.
  std::vector<NamedBuffer> state_views() const {
    HPT_REQUIRE(params_ != nullptr, "Optimizer::state_views before bind()");
    std::vector<NamedBuffer> out;
    append_state(out);
    out.push_back(NamedBuffer{"prev_update", prev_update_});
    return out;
  }
  // Zeroes every state buffer and the step counter (a fresh optimizer on the same parameters).
  void reset_state() {
    for (auto& b : state_views()) Kokkos::deep_copy(b.view, Real(0));
    steps_ = 0;
  }
  // Zeroes the first moment (SGD's momentum buffer, Adam's m) and nothing else: it then rebuilds
  // from gradients at the current parameters. A no-op for SGD without momentum.
  void zero_first_moment() {
    const buffer_type m = first_moment();
    if (m.extent(0) > 0) Kokkos::deep_copy(m, Real(0));
  }

 protected:
  virtual void allocate_state(const store_type& params) = 0;
  virtual void append_state(std::vector<NamedBuffer>& out) const = 0;
  virtual buffer_type first_moment() const = 0;  // empty where the style keeps none
  // Launches the style's update kernel (reading stats_(kClipScale), reducing into sums_).
  virtual MomentSummary update(double lr) = 0;
  virtual void fill_powers(StepTelemetry&) const {}

  Space space_;
  store_type* params_ = nullptr;
  buffer_type prev_update_;
  View1<double, memory_space> stats_;
  Kokkos::View<UpdateSums, memory_space> sums_;
  long steps_ = 0;

 private:
  double clip_norm_;
  typename View1<double, memory_space>::host_mirror_type stats_host_;
};

// The application's optimizer type: working precision on the default execution space.
using Optimizer = OptimizerBase<ExecSpace, real>;

}  // namespace hpt
