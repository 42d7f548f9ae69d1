#include "physics-style-modules/dynamics/rssm_prototype.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "kernels/parameter_store.hpp"

namespace hpt {

namespace {

constexpr std::size_t kErrorWindow = 50;       // errors the history term averages
constexpr std::int64_t kErrorCapacity = 1000;  // the prototype's error buffer (a count cap here)
constexpr int kConfidenceHorizon = 10;

template <class V>
View1<real> flat(const V& v) {
  return View1<real>(v.data(), v.span());
}

}  // namespace

PrototypeRssmOptions prototype_rssm_options(const Config& c) {
  PrototypeRssmOptions o;
  o.members = int(c.get_int("dynamics.members"));
  o.hidden = int(c.get_int("dynamics.hidden"));
  o.stochastic = int(c.get_int("dynamics.stochastic"));
  o.lr = c.get_real("dynamics.lr");
  o.clip = c.get_real("dynamics.clip_norm");
  o.seed = std::uint64_t(c.get_int("dynamics.seed"));
  return o;
}

void LossEmas::update(const double loss) {
  if (count == 0) {
    fast = medium = slow = loss;
  } else {
    fast = 0.75 * fast + 0.25 * loss;
    medium = 0.9375 * medium + 0.0625 * loss;
    slow = 0.984375 * slow + 0.015625 * loss;
  }
  ++count;
}

PrototypeRssm::PrototypeRssm(const PrototypeRssmOptions& o)
    : options_(o),
      params_(o.members, o.hidden, o.stochastic, o.input),
      latents_("rssm_prototype.latents", o.members, o.hidden),
      traj_("rssm_prototype.traj", o.members, kConfidenceHorizon),
      work_(o.members, o.hidden, o.stochastic, o.input),
      traj_host_(Kokkos::create_mirror_view(traj_)),
      predicted_host_(Kokkos::create_mirror_view(work_.predicted)) {
  HPT_REQUIRE(o.members >= 1 && o.hidden >= 1 && o.stochastic >= 1 && o.input >= 1,
              "PrototypeRssm: every size must be positive");
  initialize(o.seed);
}

void PrototypeRssm::initialize(const std::uint64_t seed) {
  const ExecSpace space;
  const double limit = std::sqrt(2.0 / double(options_.input + options_.hidden));
  fill_uniform(space, flat(params_.gru.w_ih), seed, 1, 0, limit);
  fill_uniform(space, flat(params_.gru.w_hh), seed, 2, 0, limit);
  fill_uniform(space, View1<real>(params_.head), seed, 3, 0, 0.01);
  Kokkos::deep_copy(space, params_.gru.b_ih, real(0));
  Kokkos::deep_copy(space, params_.gru.b_hh, real(0));
  Kokkos::deep_copy(space, latents_, real(0));
  space.fence();
  errors_.clear();
  errors_recorded_ = training_steps_ = 0;
}

std::vector<double> PrototypeRssm::member_paths(const View1<real>& x, const int steps) {
  HPT_REQUIRE(steps >= 1, "PrototypeRssm::member_paths: at least one step");
  Kokkos::Timer t;
  if (int(traj_.extent(1)) < steps) {
    traj_ = View2<real>("rssm_prototype.traj", members(), steps);
    traj_host_ = Kokkos::create_mirror_view(traj_);
  }
  prototype_rssm_rollout(ExecSpace(), params_, latents_, x, steps, traj_);
  Kokkos::deep_copy(traj_host_, traj_);
  const auto& host = traj_host_;
  std::vector<double> out(std::size_t(members()) * std::size_t(steps));
  for (int m = 0; m < members(); ++m)
    for (int s = 0; s < steps; ++s) out[std::size_t(m * steps + s)] = double(host(m, s));
  seconds_forecast += t.seconds();
  return out;
}

PrototypeForecast PrototypeRssm::forecast(const View1<real>& x, const int steps) {
  const std::vector<double> paths = member_paths(x, steps);
  const int E = members();
  PrototypeForecast f;
  f.mean_path.assign(std::size_t(steps), 0.0);
  for (int m = 0; m < E; ++m)
    for (int s = 0; s < steps; ++s)
      f.mean_path[std::size_t(s)] += paths[std::size_t(m * steps + s)] / E;
  const double last = f.mean_path.back();
  double var = 0.0;
  for (int m = 0; m < E; ++m) {
    const double d = paths[std::size_t(m * steps + steps - 1)] - last;
    var += d * d / E;
  }
  f.total_std = std::sqrt(var) * (1.0 + 0.1 * std::sqrt(double(steps)));
  return f;
}

void PrototypeRssm::observe(const View1<real>& x, const double state_loss, const double target) {
  Kokkos::Timer t;
  prototype_rssm_train_step(ExecSpace(), params_, latents_, x, real(target), real(options_.lr),
                            real(options_.clip), work_);
  // The one-step forecast the training step made before its updates, against the state's loss.
  Kokkos::deep_copy(predicted_host_, work_.predicted);
  double predicted = 0.0;
  for (int m = 0; m < members(); ++m) predicted += double(predicted_host_(m)) / members();
  errors_.push_back(std::fabs(predicted - state_loss));
  if (errors_.size() > kErrorWindow) errors_.pop_front();
  errors_recorded_ = std::min(errors_recorded_ + 1, kErrorCapacity);
  seconds_train += t.seconds();
  ++training_steps_;
}

double PrototypeRssm::confidence(const View1<real>& x, const LossEmas& emas) {
  const double agreement = 1.0 / (1.0 + forecast(x, kConfidenceHorizon).total_std);
  double history = 0.7;
  if (errors_recorded_ >= 10) {
    double sum = 0.0;
    for (const double e : errors_) sum += e;
    history = std::min(0.99, 1.0 / (1.0 + sum / double(errors_.size())));
  }
  const double rho =
      std::fabs(emas.slow) <= 1e-6 ? 1.0 : std::fabs(emas.fast - emas.slow) / std::fabs(emas.slow);
  const double stability = std::max(0.5, 1.0 / (1.0 + 2.0 * rho));
  return std::clamp(0.4 * agreement + 0.4 * history + 0.2 * stability, 0.0, 1.0);
}

std::vector<std::pair<std::string, View1<real>>> PrototypeRssm::state_buffers() const {
  return {{"gru_w_ih", flat(params_.gru.w_ih)},
          {"gru_w_hh", flat(params_.gru.w_hh)},
          {"gru_b_ih", flat(params_.gru.b_ih)},
          {"head", params_.head},
          {"latents", flat(latents_)}};
}

std::vector<double> PrototypeRssm::save_values() const {
  std::vector<double> v{double(errors_recorded_), double(training_steps_)};
  v.insert(v.end(), errors_.begin(), errors_.end());
  return v;
}

void PrototypeRssm::load_values(const std::vector<double>& v) {
  HPT_REQUIRE(v.size() >= 2 && v.size() <= 2 + kErrorWindow, "PrototypeRssm: wrong state size");
  errors_recorded_ = std::int64_t(v[0]);
  training_steps_ = std::int64_t(v[1]);
  errors_.assign(v.begin() + 2, v.end());
}

}  // namespace hpt
