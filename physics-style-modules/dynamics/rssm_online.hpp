#pragma once
// Online training of the RSSM ensemble (the forecaster) while the run it forecasts goes on:
// observe(x_t, L_t) keeps the last K+1 steps in a device ring and filters every member's latent
// with the real features; train_step() runs truncated BPTT over the window of the last K samples
// (kernels/rssm_bptt.hpp) with online bagging, then one Adam step with global-norm clipping.
// Everything a restart needs is listed by state_buffers() and state_counters().
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/types.hpp"
#include "kernels/rssm_bptt.hpp"
#include "kernels/rssm_filter.hpp"
#include "kernels/rssm_window.hpp"
#include "physics-style-modules/dynamics/rssm_model.hpp"
#include "physics-style-modules/optimizer/adam.hpp"

namespace hpt {

struct RssmTrainOptions {
  int bptt = 16;            // K: samples per window (dynamics.bptt)
  double lr = 1e-3;         // Adam learning rate (dynamics.lr)
  double kl_weight = 1e-3;  // beta of the prior's KL term (dynamics.kl_weight)
  double clip_norm = 5.0;   // global gradient-norm clip, <= 0: none (dynamics.clip_norm)
  std::uint64_t seed = 1;   // key of the bagging weights and prior noise (dynamics.seed)
  BpttRecurrence recurrence = BpttRecurrence::Auto;  // dynamics.bptt_recurrence
};

// dynamics.bptt, lr, kl_weight, clip_norm, seed, bptt_recurrence.
RssmTrainOptions rssm_train_options_from_config(const Config& config);

struct RssmTrainReport {
  bool trained = false;  // false until two steps were observed (no target yet)
  int samples = 0;       // samples in the window (K once K+1 steps were observed)
  double loss = 0.0;     // bagged window loss before the update, averaged over the members
  StepTelemetry optimizer;
};

template <class Space, class Real>
class RssmOnline {
 public:
  using memory_space = typename Space::memory_space;
  using model_type = RssmModel<Real, memory_space>;
  using FlatView = Kokkos::View<Real*, Kokkos::LayoutRight, memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  struct NamedBuffer {
    std::string name;
    FlatView view;  // the buffer's elements, row-major
  };
  struct NamedCounter {
    std::string name;
    std::function<std::int64_t()> get;
    std::function<void(std::int64_t)> set;
  };

  // Trains `model` (which must outlive this); allocates the optimizer state, ring and workspaces.
  RssmOnline(model_type& model, GruReset reset, const RssmTrainOptions& options)
      : model_(model),
        reset_(reset),
        options_(options),
        adam_(adam_options(options)),
        ring_(options.bptt + 1, members(), hidden(), input()),
        window_(members(), hidden(), stochastic(), input(), options.bptt),
        workspace_(members(), hidden(), stochastic(), options.bptt),
        filter_(members(), hidden(), input()),
        member_loss_("rssm.member_loss", std::size_t(members())) {
    HPT_REQUIRE(options.bptt >= 1, "RssmOnline: dynamics.bptt must be at least 1");
    adam_.bind(model_.store);
  }
  RssmOnline(const RssmOnline&) = delete;
  RssmOnline& operator=(const RssmOnline&) = delete;

  int members() const { return model_.params.members(); }
  int hidden() const { return model_.params.hidden(); }
  int stochastic() const { return model_.params.stochastic(); }
  int input() const { return model_.params.input(); }
  const RssmTrainOptions& options() const { return options_; }
  std::int64_t observed() const { return observed_; }

  // Forgets every observation and the optimizer state (the parameters and latents are the model's).
  void reset() {
    Kokkos::deep_copy(ring_.features, Real(0));
    Kokkos::deep_copy(ring_.log_loss, Real(0));
    Kokkos::deep_copy(ring_.latents, Real(0));
    adam_.reset_state();
    observed_ = 0;
  }

  // Step t: x (I) its normalised features, loss > 0 its training loss L_t. Stores both with the
  // latents before the step, then filters every member's latent with x.
  void observe(const View1<Real, memory_space>& x, const double loss) {
    HPT_REQUIRE(std::isfinite(loss) && loss > 0.0,
                "RssmOnline::observe: the loss must be finite and positive");
    const Space space;
    rssm_ring_push(space, ring_, observed_, x, std::log(loss), model_.latents);
    rssm_filter_latents(space, model_.params.gru, reset_, x, model_.latents, filter_);
    space.fence();
    ++observed_;
  }

  // One BPTT loss+gradient over the last min(K, observed - 1) samples and one Adam step.
  RssmTrainReport train_step() {
    RssmTrainReport report;
    report.samples = window_samples();
    if (report.samples < 1) return report;
    report.loss = window_loss(true);
    rssm_bptt_backward(Space(), model_.params, model_.grads, reset_, window_, options_.kl_weight,
                       workspace_, options_.recurrence);
    report.optimizer = adam_.step(options_.lr);
    report.trained = true;
    return report;
  }

  // The loss of the current window averaged over the members, with every bagging weight 1 unless
  // `bagged`; 0 when no sample has a target yet. Leaves the activations in the workspace.
  double window_loss(const bool bagged = false) {
    const int steps = window_samples();
    if (steps < 1) return 0.0;
    const Space space;
    rssm_gather_window(space, ring_, observed_ - 1 - steps, steps, options_.seed, bagged, window_);
    rssm_bptt_forward(space, model_.params, reset_, window_, options_.kl_weight, workspace_,
                      member_loss_, options_.recurrence);
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), member_loss_);
    double sum = 0.0;
    for (int m = 0; m < members(); ++m) sum += double(host(m));
    return sum / double(members());
  }

  // Every buffer of the training state by name: parameters, optimizer state, latents, ring.
  std::vector<NamedBuffer> state_buffers() const {
    std::vector<NamedBuffer> out;
    out.push_back({"parameters", flat(model_.store.values())});
    for (const auto& b : adam_.state_views()) out.push_back({"optimizer/" + b.name, flat(b.view)});
    out.push_back({"latents", flat(model_.latents)});
    out.push_back({"ring/features", flat(ring_.features)});
    out.push_back({"ring/log_loss", flat(ring_.log_loss)});
    out.push_back({"ring/latents", flat(ring_.latents)});
    return out;
  }
  // Every integer of the training state by name: observations so far and Adam's step count.
  std::vector<NamedCounter> state_counters() {
    return {{"observed", [this] { return observed_; }, [this](std::int64_t v) { observed_ = v; }},
            {"optimizer/steps", [this] { return std::int64_t(adam_.step_count()); },
             [this](std::int64_t v) { adam_.set_step_count(long(v)); }}};
  }

 private:
  static AdamOptions adam_options(const RssmTrainOptions& o) {
    AdamOptions a;
    a.clip_norm = o.clip_norm;
    return a;
  }
  template <class V>
  static FlatView flat(const V& v) {
    return FlatView(v.data(), v.span());
  }
  int window_samples() const {
    return int(std::min<std::int64_t>(options_.bptt, std::max<std::int64_t>(0, observed_ - 1)));
  }

  model_type& model_;
  GruReset reset_;
  RssmTrainOptions options_;
  Adam<Space, Real> adam_;
  RssmRing<Real, memory_space> ring_;
  RssmWindow<Real, memory_space> window_;
  RssmBpttWorkspace<Real, memory_space> workspace_;
  RssmFilterWork<Real, memory_space> filter_;
  View1<Real, memory_space> member_loss_;
  std::int64_t observed_ = 0;
};

extern template class RssmOnline<ExecSpace, real>;

}  // namespace hpt
