#pragma once
// The `Encoder` style interface (docs/method.md#encoders): turns the telemetry histories of R runs
// into R feature vectors x in R^64. A host class: it owns its normaliser statistics and scratch
// (allocated on the first encode, or again when the number of runs changes) and calls the kernels
// of src/kernels.
#include <cstddef>
#include <string>

#include "core/types.hpp"
#include "kernels/feature_normalizer.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/rich_workspace.hpp"
#include "kernels/telemetry_history.hpp"

namespace hpt {

class Encoder {
 public:
  using History = TelemetryHistory<real, MemSpace>;
  using Normalizer = FeatureNormalizer<real, MemSpace>;

  virtual ~Encoder() = default;
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  virtual std::string style() const = 0;
  // features (runs x kFeatures) of every run of `history`, as the dynamics model consumes them.
  virtual void encode(const History& history, const View2<real>& features) = 0;
  // How the rollout evolves these features along an imagined loss path (loss_state.hpp).
  virtual FeatureUpdate feature_update() const = 0;
  // Bytes one encode() of `runs` runs reads and writes (the bench's GB/s).
  virtual std::size_t bytes_per_encode(int runs) const = 0;

  // The normaliser, or nullptr for a style without one (`prototype`). Its statistics belong in
  // checkpoints; center/inv_std row r are what the rollout re-normalises run r's features with.
  virtual Normalizer* normalizer() { return nullptr; }
  // Allocates per-run state (normaliser statistics, scratch) for `runs` runs, fresh; encode() does
  // it when the number of runs changes, so call it before loading saved statistics.
  virtual void prepare(int /*runs*/) {}
  virtual const Normalizer* normalizer() const { return nullptr; }
  // Row `run` of the normaliser's mean and inverse std (empty Views without a normaliser).
  View1<real> normalizer_mean(int run) const;
  View1<real> normalizer_inv_std(int run) const;

  // Per-run loss summary that the rollout continues (same definitions for every style).
  void extract_loss_state(const History& history, const View1<LossState<real>>& states) const;

  int loss_capacity() const { return loss_capacity_; }
  int other_capacity() const { return other_capacity_; }
  double clamp() const { return clamp_; }
  // An empty history of `runs` runs with this encoder's ring capacities.
  History create_history(int runs) const;

 protected:
  Encoder(int loss_capacity, int other_capacity, double clamp);
  // Throws InternalError unless features is (history.runs(), kFeatures).
  static void check_shapes(const History& history, const View2<real>& features);
  // Kept across calls for the rich kernel's series-per-thread layout (many runs on a GPU); mutable
  // because extract_loss_state, which uses it too, is const.
  rich::RichWorkspace<MemSpace>& workspace() const { return workspace_; }

 private:
  mutable rich::RichWorkspace<MemSpace> workspace_;
  int loss_capacity_;
  int other_capacity_;
  double clamp_;
};

}  // namespace hpt
