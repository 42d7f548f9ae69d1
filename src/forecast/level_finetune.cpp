#include "forecast/level_finetune.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>

#include "core/types.hpp"
#include "forecast/baselines.hpp"
#include "forecast/level_features.hpp"

namespace hpt::forecast {

namespace {

// Run r's realised origins, newest first, each with its realised horizons.
void run_origins(const Curve& c, int r, const std::vector<int>& horizons, long long g,
                 const FinetuneSettings& s, std::vector<SampleOrigin>& out) {
  if (horizons.empty()) return;
  const int newest = entries_upto(c, g - horizons.front() - kTargetAfter);
  if (newest < s.first_origin) return;
  const int top = s.first_origin + (newest - s.first_origin) / s.origin_stride * s.origin_stride;
  for (int n = top; n >= s.first_origin; n -= s.origin_stride) {
    const long long t = c.steps[std::size_t(n - 1)];
    for (int h : horizons) {
      const long long end = t + h + kTargetAfter;  // the target window's last step
      if (end <= g && end <= c.steps.back()) out.push_back({r, n, h});
    }
  }
}

// The model's horizons, or pretraining's default ones for a model file that names none.
std::vector<int> sample_horizons(const LevelModel& m) {
  std::vector<int> h = m.horizons.empty() ? LevelSampling{}.horizons : m.horizons;
  std::sort(h.begin(), h.end());
  return h;
}

}  // namespace

std::vector<SampleOrigin> realised_origins(const std::vector<Curve>& runs,
                                           const std::vector<int>& members,
                                           const std::vector<int>& horizons, long long g,
                                           const FinetuneSettings& s) {
  std::vector<SampleOrigin> all;
  for (int r : members) run_origins(runs[std::size_t(r)], r, horizons, g, s, all);
  if (int(all.size()) <= s.max_samples) return all;
  std::vector<SampleOrigin> kept;
  const std::size_t count = all.size(), cap = std::size_t(s.max_samples);
  for (std::size_t i = 0; i < cap; ++i) kept.push_back(all[i * count / cap]);
  return kept;
}

std::vector<LevelSample> realised_samples(const std::vector<Curve>& runs,
                                          const std::vector<SampleOrigin>& origins) {
  std::vector<LevelSample> made(origins.size());
  std::vector<char> known(origins.size(), 0);
  Kokkos::parallel_for("hpt::finetune_samples",
                       Kokkos::RangePolicy<HostExec>(0, int(origins.size())), [&](int i) {
                         const SampleOrigin& o = origins[std::size_t(i)];
                         const Curve& c = runs[std::size_t(o.run)];
                         const LevelHistory hist = level_history(c.steps, c.loss, o.n);
                         const double target = target_log_loss(c.steps, c.loss, hist.t, o.h);
                         if (std::isnan(target)) return;
                         LevelSample& s = made[std::size_t(i)];
                         s.f = level_features(hist, c.steps, c.lr, o.h);
                         s.change = target - s.f.last;
                         s.horizon = o.h;
                         known[std::size_t(i)] = 1;
                       });
  HostExec().fence();
  std::vector<LevelSample> out;
  for (std::size_t i = 0; i < made.size(); ++i)
    if (known[i]) out.push_back(made[i]);
  return out;
}

LevelModel finetune_level_model(const LevelModel& pretrained,
                                const std::vector<LevelSample>& samples, double strength,
                                int rounds) {
  LevelModel m = pretrained;
  const double ridge = strength * double(samples.size());
  const double quantiles[3] = {0.5, 0.05, 0.95};
  std::vector<double>* weights[3] = {&m.median, &m.q05, &m.q95};
  const std::vector<double>* priors[3] = {&pretrained.median, &pretrained.q05, &pretrained.q95};
  Kokkos::parallel_for("hpt::finetune_quantiles", Kokkos::RangePolicy<HostExec>(0, 3), [&](int q) {
    *weights[q] =
        fit_quantile(samples, quantiles[q], ridge, rounds, &m.rounds[std::size_t(q)], priors[q]);
  });
  HostExec().fence();
  m.samples = (long long)samples.size();
  return m;
}

LevelFinetuner::LevelFinetuner(const LevelModel& pretrained, const FinetuneSettings& settings,
                               const std::vector<Curve>& runs, const std::vector<int>& group)
    : pretrained_(pretrained), s_(settings), runs_(runs) {
  const int groups = group.empty() ? 1 : *std::max_element(group.begin(), group.end()) + 1;
  members_.resize(std::size_t(groups));
  for (std::size_t r = 0; r < runs.size(); ++r) members_[std::size_t(group[r])].push_back(int(r));
  models_.assign(std::size_t(groups), pretrained);
  next_ = s_.every;
}

void LevelFinetuner::advance(long long g) {
  if (!s_.on || pretrained_.empty() || g < next_) return;
  next_ = (g / s_.every + 1) * s_.every;
  refit(g);
}

// Every group from its samples realised by step g, each from the pretrained model (refits do not
// compound).
void LevelFinetuner::refit(long long g) {
  const std::vector<int> horizons = sample_horizons(pretrained_);
  for (std::size_t k = 0; k < members_.size(); ++k) {
    const std::vector<LevelSample> samples =
        realised_samples(runs_, realised_origins(runs_, members_[k], horizons, g, s_));
    if (int(samples.size()) < s_.min_samples) continue;
    models_[k] = finetune_level_model(pretrained_, samples, s_.strength, s_.rounds);
    ++refits_;
    samples_ += (long long)samples.size();
  }
}

}  // namespace hpt::forecast
