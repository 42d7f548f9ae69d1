#pragma once
// A run recorded at every step as a training script that logs every K steps would have written it
// (its entries at steps divisible by K, and its last), read step by step as such a file is
// (forecast/curve_densify.hpp): pretraining on these (pretrain.logged_every_runs) shows the level
// forecaster single minibatch losses far apart, joined by straight lines, which runs logged every
// step do not.
#include "forecast/curve.hpp"

namespace hpt::forecast {

// Fewer logged entries than this make no curve: pretraining needs history and a target window.
constexpr std::size_t kMinLoggedEntries = 10;

// The curve of `run` logged every `every` steps (id `<id>/every-<every>`, same group and split):
// loss, learning rate and gradient norm at the kept steps, then densified. False (and `out`
// untouched) when `run` is itself sparse (its entries are not consecutive steps) or keeps fewer
// than kMinLoggedEntries entries.
bool logged_every_curve(const Curve& run, long long every, Curve& out);

}  // namespace hpt::forecast
