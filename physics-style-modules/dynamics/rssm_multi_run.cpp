#include "physics-style-modules/dynamics/rssm_multi_run.hpp"

#include <algorithm>

#include "core/rng.hpp"

namespace hpt {

namespace {

AdamOptions adam_options(const RssmTrainOptions& o) {
  AdamOptions a;
  a.clip_norm = o.clip_norm;
  return a;
}

}  // namespace

RssmMultiRunTrainer::RssmMultiRunTrainer(RssmModel<real>& model, GruReset reset,
                                         const RssmTrainOptions& options, int runs)
    : model_(model),
      reset_(reset),
      options_(options),
      adam_(adam_options(options)),
      rings_(runs, options.bptt + 1, model.params.members(), model.params.hidden(),
             model.params.input()),
      window_(model.params.members(), model.params.hidden(), model.params.stochastic(),
              model.params.input(), options.bptt),
      workspace_(model.params.members(), model.params.hidden(), model.params.stochastic(),
                 options.bptt),
      member_loss_("rssm.multi_run.member_loss", std::size_t(model.params.members())),
      slot_("rssm.multi_run.slot", std::size_t(runs)),
      observed_(std::size_t(runs), 0) {
  HPT_REQUIRE(options.bptt >= 1 && runs >= 1, "RssmMultiRunTrainer: needs bptt >= 1 and runs");
  adam_.bind(model_.store);
}

void RssmMultiRunTrainer::observe(const std::vector<int>& active_host, const View2<real>& x,
                                  const View1<real>& log_loss, const View3<real>& latents) {
  auto slot = Kokkos::create_mirror_view(slot_);
  for (std::size_t r = 0; r < observed_.size(); ++r)
    slot(r) = active_host[r] ? int(observed_[r] % rings_.slots()) : -1;
  Kokkos::deep_copy(slot_, slot);
  rssm_ring_push_batched(ExecSpace(), rings_, slot_, x, log_loss, latents);
  for (std::size_t r = 0; r < observed_.size(); ++r)
    if (active_host[r]) ++observed_[r];
}

int RssmMultiRunTrainer::train(int runs_per_step, double* mean_loss) {
  const int R = int(observed_.size());
  int made = 0;
  double loss_sum = 0;
  for (int tried = 0; tried < R && made < runs_per_step; ++tried) {
    const int r = next_run_;
    next_run_ = (next_run_ + 1) % R;
    const std::int64_t n = observed_[std::size_t(r)];
    const int steps = int(std::min<std::int64_t>(options_.bptt, n - 1));
    if (steps < 1) continue;
    const std::uint64_t run_seed = rng::key(options_.seed, 0x4d554c54ULL, std::uint64_t(r));
    rssm_gather_window(ExecSpace(), rings_.ring(r), n - 1 - steps, steps, run_seed, true, window_);
    rssm_bptt_forward(ExecSpace(), model_.params, reset_, window_, options_.kl_weight, workspace_,
                      member_loss_, options_.recurrence);
    if (mean_loss) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), member_loss_);
      for (std::size_t m = 0; m < h.extent(0); ++m) loss_sum += double(h(m)) / double(h.extent(0));
    }
    rssm_bptt_backward(ExecSpace(), model_.params, model_.grads, reset_, window_,
                       options_.kl_weight, workspace_, options_.recurrence);
    adam_.step(options_.lr);
    ++made, ++updates_;
  }
  if (mean_loss) *mean_loss = made > 0 ? loss_sum / made : 0.0;
  return made;
}

}  // namespace hpt
