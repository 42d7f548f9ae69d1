#pragma once
// Online training of one shared RSSM ensemble on the transitions of R runs followed together
// (run.mode = forecast): every run keeps a ring of its last K+1 steps with its own latents before
// each step; a training step runs truncated BPTT on the windows of a few runs in turn (round robin
// over the runs that have a target), one Adam step each. The bagging weights and the prior noise
// are keyed by (seed of the run, member, the run's step), so every run has its own draws.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <vector>

#include "kernels/rssm_bptt.hpp"
#include "kernels/rssm_ring_batch.hpp"
#include "physics-style-modules/dynamics/rssm_model.hpp"
#include "physics-style-modules/dynamics/rssm_online.hpp"
#include "physics-style-modules/optimizer/adam.hpp"

namespace hpt {

class RssmMultiRunTrainer {
 public:
  RssmMultiRunTrainer(RssmModel<real>& model, GruReset reset, const RssmTrainOptions& options,
                      int runs);

  // The step of every run r with active_host[r]: x (R, I) its features, log_loss (R) its log loss,
  // latents (R, E, H) its latents before the features are filtered in.
  void observe(const std::vector<int>& active_host, const View2<real>& x,
               const View1<real>& log_loss, const View3<real>& latents);
  // Up to `runs_per_step` BPTT + Adam steps, one per run, round robin; returns how many were made
  // and (mean over them) the bagged window loss before the updates.
  int train(int runs_per_step, double* mean_loss = nullptr);

  long long updates() const { return updates_; }

 private:
  RssmModel<real>& model_;
  GruReset reset_;
  RssmTrainOptions options_;
  Adam<ExecSpace, real> adam_;
  RssmRingBatch<real> rings_;
  RssmWindow<real> window_;
  RssmBpttWorkspace<real> workspace_;
  View1<real> member_loss_;
  View1<int> slot_;
  std::vector<std::int64_t> observed_;  // steps pushed per run
  int next_run_ = 0;                    // round-robin position
  long long updates_ = 0;
};

}  // namespace hpt
