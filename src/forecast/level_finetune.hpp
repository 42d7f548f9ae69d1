#pragma once
// Online fine-tuning of the learned level forecaster (docs/method.md#online-fine-tuning): while a
// sweep is replayed, every forecast.finetune_every steps each group's three quantile regressions
// are refitted on the samples of that group's runs realised so far (the target window of a sample
// ends at or before the current step: strictly causal), by the pinball IRLS of fit_quantile with
// the ridge centred on the pretrained weights instead of zero.
#include <vector>

#include "forecast/curve.hpp"
#include "forecast/level_model.hpp"

namespace hpt::forecast {

struct FinetuneSettings {
  bool on = false;         // forecast.finetune
  long long every = 250;   // forecast.finetune_every: a refit at the first step past each multiple
  double strength = 500;   // forecast.finetune_strength: the prior's weight per sample
  int max_samples = 2048;  // forecast.finetune_samples: most samples of one group's refit
  int rounds = 100;        // reweighting rounds of each quantile (warm-started at the prior)
  int min_samples = 100;   // a group with fewer realised samples keeps the pretrained model
  int origin_stride = 10;  // an origin every this many entries of a run (as pretraining samples)
  int first_origin = 20;   // entries of history at a run's first origin
};

// One realised sample: run r, its first n entries as history, horizon h.
struct SampleOrigin {
  int run = 0, n = 0, h = 0;
};

// The samples of the runs `members` realised by step g: origins every origin_stride entries from
// the first_origin-th, at every horizon whose target window (ending kTargetAfter steps after
// origin + h) ends at or before g. When there are more than max_samples, an evenly spaced subset
// of them in (run, newest origin first, horizon) order: deterministic.
std::vector<SampleOrigin> realised_origins(const std::vector<Curve>& runs,
                                           const std::vector<int>& members,
                                           const std::vector<int>& horizons, long long g,
                                           const FinetuneSettings& s);
// Their features and changes (computed on the host's threads; a target the run lacks is skipped).
std::vector<LevelSample> realised_samples(const std::vector<Curve>& runs,
                                          const std::vector<SampleOrigin>& origins);

// The pretrained model refitted on `samples`: each quantile minimises
// sum_i rho(change_i - z_i . v) + strength * N / 2 * |v - v_pretrained|^2 (fit_quantile's
// standardised coordinates, N samples).
LevelModel finetune_level_model(const LevelModel& pretrained,
                                const std::vector<LevelSample>& samples, double strength,
                                int rounds);

// The models of every group of a sweep as its replay walks forward: the pretrained model until a
// group's first refit.
class LevelFinetuner {
 public:
  // `runs` must outlive the finetuner; `group` maps run -> group index.
  LevelFinetuner(const LevelModel& pretrained, const FinetuneSettings& settings,
                 const std::vector<Curve>& runs, const std::vector<int>& group);
  // At step g of the replay (increasing): refits every group when a multiple of `every` was
  // reached, from what is known at g.
  void advance(long long g);
  const LevelModel& model(int group) const { return models_[std::size_t(group)]; }
  long long refits() const { return refits_; }    // group refits made
  long long samples() const { return samples_; }  // samples they used, all together

 private:
  void refit(long long g);

  LevelModel pretrained_;
  FinetuneSettings s_;
  const std::vector<Curve>& runs_;
  std::vector<std::vector<int>> members_;  // group -> its runs
  std::vector<LevelModel> models_;         // group -> its current model
  long long next_ = 0;                     // the step of the next refit
  long long refits_ = 0, samples_ = 0;
};

}  // namespace hpt::forecast
