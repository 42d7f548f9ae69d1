#pragma once
// `power` as a guard of the combined forecast (docs/method.md#combined-forecast): the saturating
// power law's forecast where the law decays, and no forecast where it is flat (b = 0, what the
// constrained fit gives a loss that rises, or no fit). On a run logged every few steps, a horizon
// whose target window starts before the next logged step is drawn from the logged loss, as the
// learned forecast is (forecast/logged_anchor.hpp), so that the guard carries the part of the
// target that is known at the origin.
#include "forecast/baselines.hpp"
#include "forecast/curve.hpp"

namespace hpt::forecast {

// The guard's forecast of the log loss h steps after entry n - 1 of `run`, from `fit` (the power
// law fitted to the first n entries); NaN where the law does not decay.
double power_guard(const Curve& run, const PowerLaw& fit, int n, int h);

}  // namespace hpt::forecast
