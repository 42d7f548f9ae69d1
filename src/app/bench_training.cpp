#include "app/bench_training.hpp"

#include <cmath>

#include "app/bench_sizes.hpp"
#include "kernels/rssm_bptt.hpp"

namespace hpt::app {

const std::vector<TrainingSize>& training_sizes() {
  static const std::vector<TrainingSize> sizes = {{"forecast", 4, 32, 8, kFeatures, 16},
                                                  {"default", 5, 256, 32, kFeatures, 16},
                                                  {"h1024", 5, 1024, 32, kFeatures, 16},
                                                  {"e64", 64, 256, 32, kFeatures, 16}};
  return sizes;
}

std::vector<TrainingSize> parse_training_sizes(const std::string& list, const std::string& key) {
  return pick_named_sizes(list, key, training_sizes());
}

double training_step_flops(const TrainingSize& size) {
  return rssm_bptt_flops(size.members, size.hidden, size.stochastic, size.input, size.bptt);
}

namespace {

RssmTrainOptions training_options(const Config& config, const TrainingSize& size) {
  RssmTrainOptions o = rssm_train_options_from_config(config);
  o.bptt = size.bptt;
  return o;
}

GruReset deck_reset(const Config& config) {
  return config.get_string("gru.reset") == "before" ? GruReset::Before : GruReset::After;
}

}  // namespace

TrainingStepBench::TrainingStepBench(const Config& config, const TrainingSize& size,
                                     const std::uint64_t seed)
    : dynamics_(size.members, size.hidden, size.stochastic, size.input, deck_reset(config),
                training_options(config, size)) {
  dynamics_.initialize(seed);
  auto& online = dynamics_.online();
  View1<real> x("hpt::bench_train_x", std::size_t(size.input));
  for (int t = 0; t <= size.bptt; ++t) {  // a gently falling loss with features in [-1, 1]
    fill_uniform(ExecSpace(), x, seed, 2001, std::uint64_t(t), 1.0);
    online.observe(x, 2.0 * std::exp(-0.02 * t) + 0.01 * (t % 3));
  }
}

}  // namespace hpt::app
