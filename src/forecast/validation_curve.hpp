#pragma once
// A run's validation losses as a curve of their own, for pretraining the learned level forecaster
// (pretrain.validation_runs) and for forecasting a run's validation points with it
// (forecast/validation_forecast.hpp): validation losses measured on a fixed set every few dozen
// steps are smooth, sparse and may turn up when a model overfits, a kind of curve that training
// losses do not show.
#include "forecast/curve.hpp"

namespace hpt::forecast {

// Fewer validation losses than this make no curve: pretraining needs history and a target window.
constexpr std::size_t kMinValidationPoints = 10;

// The curve of `run`'s validation losses at their steps (id `<id>/validation`, same group and
// split), read step by step as a sparse run is (forecast/curve_densify.hpp), with the run's own
// learning rate of every step where the run has one. False (and `out` untouched) when the run has
// fewer than kMinValidationPoints validation losses.
bool validation_curve(const Curve& run, Curve& out);

}  // namespace hpt::forecast
