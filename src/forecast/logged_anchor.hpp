#pragma once
// Forecasts of a run logged every few steps (forecast/curve_densify.hpp) whose target window starts
// before the next logged step. Between two logged steps the scored loss is the line from the
// origin's logged loss to the next logged one, so such a target is partly known at the origin: the
// forecast is that line drawn from the logged loss to the forecast of the next logged step
// (docs/method.md#runs-logged-every-few-steps). A validation loss logged every 25 steps is the
// common case: ten steps ahead, 58 % of the target is the loss logged at the origin.
#include "forecast/curve.hpp"
#include "forecast/level_model.hpp"

namespace hpt::forecast {

// Whether the forecast h steps after a logged origin of `run` reads the line to the next logged
// step: the run was densified (logged every Δ > 1 steps) and its target window starts before
// origin + Δ.
bool anchored_between_logs(const Curve& run, int h);

// The forecast of the target window h steps after the origin (entry n - 1 of `run`, a logged one),
// each of median and bounds: the window's mean loss, where a step before the origin has the run's
// loss, a step up to the next logged one (origin + Δ) the line from the logged loss at the origin
// to `at_next` (the forecast at Δ), and a later step `at_h` (the forecast at h); then its log.
LevelForecast anchor_to_logged(const Curve& run, int n, int h, const LevelForecast& at_h,
                               const LevelForecast& at_next);

}  // namespace hpt::forecast
