#include "app/mode_rollout.hpp"

#include <Kokkos_Core.hpp>
#include <iostream>
#include <set>

#include "app/output_location.hpp"
#include "app/synthetic_history.hpp"
#include "core/registry.hpp"
#include "io/console.hpp"
#include "io/dynamics_model_file.hpp"
#include "io/rollout_file.hpp"
#include "kernels/rollout_statistics.hpp"
#include "physics-style-modules/dynamics/register.hpp"
#include "physics-style-modules/encoder/register.hpp"

namespace hpt::app {

void declare_rollout_options(OptionSchema& s) {
  s.add_int("rollout.horizon", 50, "forecast horizon Y (steps)", 0, 1000000);
  s.add_int("rollout.scenarios", 64, "independent scenarios N per member", 1, 1 << 24);
  s.add_string("rollout.model", "", "model file written by hpt (empty: seeded random init)");
  s.add_string("rollout.save_model", "", "write the dynamics parameters to this model file");
  s.add_int("rollout.history", 200, "steps of the synthetic training history encoded at start", 1,
            10000000);
  s.add_real("rollout.initial_loss", 2.3, "synthetic history: loss at step 0", 1e-12, 1e12);
  s.add_real("rollout.final_loss", 0.4, "synthetic history: loss it decays towards", 1e-12, 1e12);
  s.add_real("rollout.noise", 0.05, "synthetic history: relative noise of each loss", 0, 10);
  s.add_bool("rollout.write_paths", true, "write every loss path (N x E x (Y+1)) to the output");
}

void check_rollout_inputs(const RunContext& ctx) {
  const std::string model = ctx.config.get_string("rollout.model");
  if (!model.empty()) io::check_model_file(model, "rollout.model", ctx.config);
  check_output_file(ctx.output_path(".h5"), "output.name", ctx.output_dir);
  const std::string save = ctx.config.get_string("rollout.save_model");
  if (!save.empty()) check_output_file(save, "rollout.save_model", ctx.output_dir);
}

namespace {

// Encodes a synthetic training history of one run at every step, as in training, so the
// normaliser has seen the whole history; returns its features.
View2<real> encode_synthetic_history(const Config& c, Encoder& encoder, Encoder::History& history) {
  SyntheticHistorySpec spec;
  spec.steps = int(c.get_int("rollout.history"));
  spec.initial_loss = c.get_real("rollout.initial_loss");
  spec.final_loss = c.get_real("rollout.final_loss");
  spec.noise = c.get_real("rollout.noise");
  spec.seed = std::uint64_t(c.get_int("run.seed"));
  View2<real> features("hpt::features", 1, kFeatures);
  fill_synthetic_history(history, spec, [&] { encoder.encode(history, features); });
  return features;
}

RolloutSettings rollout_settings(const Config& c, const Encoder& encoder) {
  RolloutSettings settings;
  settings.horizon = int(c.get_int("rollout.horizon"));
  settings.scenarios = int(c.get_int("rollout.scenarios"));
  settings.seed = std::uint64_t(c.get_int("run.seed"));
  settings.feature_update = encoder.feature_update();
  settings.clamp = encoder.clamp();
  return settings;
}

// The console summary at a few horizons.
void print_rollout_summary(const RolloutStatistics<real>& stats, const Dynamics& dynamics,
                           const Encoder& encoder, const RolloutSettings& settings,
                           double seconds) {
  auto h = [](const auto& v) {
    return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  };
  const auto mean = h(stats.mean_loss);
  const auto q = h(stats.loss_quantiles);
  const auto tot = h(stats.total_std);
  const auto alea = h(stats.aleatoric_var);
  const auto epi = h(stats.epistemic_var);
  const auto smooth = h(stats.smoothness);
  const int E = dynamics.members(), Y = settings.horizon, N = settings.scenarios;
  io::TextTable table(
      {"step", "mean L", "q05", "q50", "q95", "std log L", "aleatoric var", "epistemic var"});
  for (int k : std::set<int>{0, std::min(1, Y), Y / 4, Y / 2, (3 * Y) / 4, Y}) {
    table.add_row({std::to_string(k), io::fmt(mean(k)), io::fmt(q(k, 0)), io::fmt(q(k, 1)),
                   io::fmt(q(k, 2)), io::fmt(tot(k)), io::fmt(alea(k)), io::fmt(epi(k))});
  }
  std::cout << "\nrollout: " << N << " scenarios x " << E << " members x " << Y << " steps ("
            << dynamics.style() << ", H " << dynamics.hidden() << ", S " << dynamics.stochastic()
            << ", encoder " << encoder.style() << ") in " << io::fmt(seconds * 1e3) << " ms ("
            << io::fmt(Y > 0 ? seconds / Y * 1e6 : 0.0) << " us per step)\n"
            << table.str() << "smoothness " << io::fmt(smooth(0)) << "\n";
}

}  // namespace

int run_rollout_mode(const RunContext& ctx) {
  const Config& c = ctx.config;
  Kokkos::Profiling::pushRegion("hpt::rollout_mode");
  Registry<Encoder> encoders("encoder");
  register_encoder_styles(encoders);
  Registry<Dynamics> dynamics_styles("dynamics");
  register_dynamics_styles(dynamics_styles);
  auto encoder = encoders.create(c.get_string("encoder.style"), c);
  auto dynamics = dynamics_styles.create(c.get_string("dynamics.style"), c);
  dynamics->initialize(std::uint64_t(c.get_int("dynamics.seed")));  // also zeroes the latents
  const std::string model = c.get_string("rollout.model");
  if (!model.empty()) io::load_model_file(*dynamics, model);

  auto history = encoder->create_history(1);
  const View2<real> features = encode_synthetic_history(c, *encoder, history);
  View1<LossState<real>> loss_states("hpt::loss_states", 1);
  encoder->extract_loss_state(history, loss_states);
  RolloutInputs<real> in;
  in.x0 = Kokkos::subview(features, 0, Kokkos::ALL());
  in.loss_states = loss_states;
  in.run = 0;
  in.norm_mean = encoder->normalizer_mean(0);
  in.norm_inv_std = encoder->normalizer_inv_std(0);
  const RolloutSettings settings = rollout_settings(c, *encoder);
  RolloutOutputs<real> out(settings.scenarios, dynamics->members(), dynamics->hidden(),
                           settings.horizon);
  RolloutStatistics<real> stats(dynamics->members(), settings.horizon);

  Kokkos::fence();
  Kokkos::Timer timer;
  dynamics->rollout(in, settings, out);
  compute_rollout_statistics(ExecSpace(), out.loss_paths, stats);
  Kokkos::fence();
  const double seconds = timer.seconds();
  Kokkos::Profiling::popRegion();
  print_rollout_summary(stats, *dynamics, *encoder, settings, seconds);

  const std::string path = ctx.output_path(".h5");
  io::write_rollout_file(path, ctx.resolved_ini, out, features, stats, seconds,
                         c.get_bool("rollout.write_paths"));
  std::cout << "wrote " << path << "\n";
  const std::string save = c.get_string("rollout.save_model");
  if (!save.empty()) {
    io::save_model_file(*dynamics, save, ctx.resolved_ini);
    std::cout << "wrote model " << save << "\n";
  }
  return 0;
}

}  // namespace hpt::app
