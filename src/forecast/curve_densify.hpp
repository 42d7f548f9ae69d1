#pragma once
// Curves logged every few steps (a training script that logs every 10 or 50 steps), read step by
// step (docs/outputs.md#loss-curves): a forecast's target is the mean loss over ten consecutive
// steps, which such a file never holds. Between two logged steps the loss, and the learning rate
// and gradient norm where present, are interpolated linearly; the entries filled in are
// marked, and forecast mode makes origins only at logged steps and counts a target as known at the
// first logged step that ends its window, so no forecast reads a loss logged after its origin.
#include "forecast/curve.hpp"

namespace hpt::forecast {

// Logging intervals above this are left as they are: a run of a million steps logged every
// thousand would fill a million entries, and horizons of 10 to 200 steps say nothing about it.
constexpr long long kMaxDensifyInterval = 100;

// The typical spacing of a run's logged steps: the median difference (1 with under 2 entries).
long long logging_interval(const Curve& c);

// `c` with an entry at every step from its first to its last, `logged` marking the logged ones,
// except across a gap wider than kMaxDensifyInterval (left as it is).
Curve densified(const Curve& c);

// Whether `c` is logged every 2 .. kMaxDensifyInterval steps (its median spacing).
bool densifiable(const Curve& c);

// Replaces `c` by densified(c) when it is densifiable; says whether it did.
bool densify_if_sparse(Curve& c);

// Densifies every run of `set` whose logging interval is 2 .. kMaxDensifyInterval, and adds one
// note saying how many runs were read so and at which intervals (and one for any left sparse).
void densify_sparse_runs(CurveSet& set);

}  // namespace hpt::forecast
