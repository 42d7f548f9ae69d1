#include "forecast/synthetic_curves.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "forecast/schedule_law.hpp"

namespace hpt::forecast {

namespace {

constexpr double kPi = 3.14159265358979323846;

// A generator for curve `index` and purpose `stream` (0: spec, 1: noise), independent of the
// others.
std::mt19937_64 stream_rng(std::uint64_t seed, int index, int stream) {
  std::seed_seq seq{std::uint32_t(seed), std::uint32_t(seed >> 32), std::uint32_t(index),
                    std::uint32_t(stream)};
  return std::mt19937_64(seq);
}

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

double log_uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::exp(uniform(rng, std::log(lo), std::log(hi)));
}

}  // namespace

double synthetic_lr(SyntheticSchedule schedule, int i, int steps) {
  const double x = double(i) / double(steps), warm = 0.03;
  const double ramp = x < warm ? (i + 1) / (warm * steps) : 1.0;
  switch (schedule) {
    case SyntheticSchedule::kConstant:
      return 1.0;
    case SyntheticSchedule::kCosine:
      return x < warm ? ramp : 0.5 * (1 + std::cos(kPi * (x - warm) / (1 - warm)));
    case SyntheticSchedule::kWsd:
      return x < warm ? ramp : (x < 0.8 ? 1.0 : (1 - x) / 0.2);
    case SyntheticSchedule::kStep:
      return x < 0.5 ? 1.0 : (x < 0.75 ? 0.1 : 0.01);
    case SyntheticSchedule::kLinear:
      return 1.0 - x * (1 - 1.0 / steps);
  }
  return 1.0;
}

SyntheticCurveSpec draw_synthetic_spec(std::uint64_t seed, int index) {
  std::mt19937_64 rng = stream_rng(seed, index, 0);
  SyntheticCurveSpec s;
  const int lengths[] = {1000, 2000, 3000};
  s.steps = lengths[std::uniform_int_distribution<int>(0, 2)(rng)];
  s.schedule =
      SyntheticSchedule(std::uniform_int_distribution<int>(0, kSyntheticSchedules - 1)(rng));
  s.peak_lr = log_uniform(rng, 1e-4, 1.0);
  s.L0 = log_uniform(rng, 1e-3, 3.0);
  s.A = s.L0 * log_uniform(rng, 0.2, 20.0);
  s.alpha = uniform(rng, 0.1, 1.2);
  s.C = s.L0 * log_uniform(rng, 0.01, 1.0);
  s.noise = log_uniform(rng, 0.003, 0.4);
  s.noise_corr = uniform(rng, 0.0, 0.9);
  if (uniform(rng, 0, 1) < 0.2) {
    s.plateau_start = int(uniform(rng, 0.05, 0.5) * s.steps);
    s.plateau_steps = int(uniform(rng, 0.05, 0.3) * s.steps);
  }
  if (uniform(rng, 0, 1) < 0.15) {
    s.spike_step = int(uniform(rng, 0.1, 0.9) * s.steps);
    s.spike_size = uniform(rng, 0.1, 1.5);
  }
  if (uniform(rng, 0, 1) < 0.08) {
    s.diverge_step = int(uniform(rng, 0.1, 0.9) * s.steps);
    s.diverge_rate = log_uniform(rng, 1e-3, 0.05);
  }
  return s;
}

Curve make_synthetic_curve(const SyntheticCurveSpec& spec, std::uint64_t seed, int index) {
  std::mt19937_64 rng = stream_rng(seed, index, 1);
  std::normal_distribution<double> z(0.0, 1.0);
  Curve c;
  c.id = "synthetic-" + std::to_string(index);
  c.group = c.split = "synthetic";
  std::vector<long long> steps;
  std::vector<double> lr;
  for (int i = 0; i < spec.steps; ++i) {
    steps.push_back(i + 1);
    lr.push_back(spec.peak_lr * synthetic_lr(spec.schedule, i, spec.steps));
  }
  // The law's clock: the learning rates, stopped during a plateau (no progress, the same rate).
  std::vector<double> clock = lr;
  for (int i = spec.plateau_start;
       i >= 0 && i < spec.plateau_start + spec.plateau_steps && i < spec.steps; ++i)
    clock[std::size_t(i)] = 0.0;
  const ScheduleAreas areas = schedule_areas(steps, clock);
  const double unit = spec.peak_lr * spec.steps;  // S1 and S2 in units of a whole run at the peak
  double e = 0, first = 0;
  for (int i = 0; i < spec.steps; ++i) {
    const double s1 = std::max(areas.forward[std::size_t(i)] / unit, 1e-6);
    const double s2 = areas.annealing[std::size_t(i)] / unit;
    double log_loss = std::log(std::max(
        spec.L0 + spec.A * std::pow(s1 * 50.0, -spec.alpha) - spec.C * s2, 0.05 * spec.L0));
    e = spec.noise_corr * e + std::sqrt(1 - spec.noise_corr * spec.noise_corr) * z(rng);
    log_loss += spec.noise * e;
    if (spec.spike_step >= 0 && i >= spec.spike_step)
      log_loss += spec.spike_size * std::exp(-(i - spec.spike_step) / 50.0);
    if (spec.diverge_step >= 0 && i >= spec.diverge_step)
      log_loss +=
          spec.diverge_rate * (i - spec.diverge_step) * (1 + 0.01 * (i - spec.diverge_step));
    const double loss = std::exp(log_loss);
    if (i == 0) first = loss;
    if (spec.diverge_step >= 0 && loss > 3 * first) {  // diverged: the curve ends before it
      c.diverged = true;
      break;
    }
    c.steps.push_back(steps[std::size_t(i)]);
    c.loss.push_back(loss);
    c.lr.push_back(lr[std::size_t(i)]);
  }
  return c;
}

std::vector<Curve> synthetic_curves(int count, std::uint64_t seed) {
  std::vector<Curve> out;
  for (int i = 0; i < count; ++i) {
    Curve c = make_synthetic_curve(draw_synthetic_spec(seed, i), seed, i);
    if (c.steps.size() >= 50) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace hpt::forecast
