#include "app/mode_rollout.hpp"

#include <Kokkos_Core.hpp>
#include <iostream>
#include <set>

#include "app/model_file.hpp"
#include "app/output_location.hpp"
#include "app/synthetic_history.hpp"
#include "core/registry.hpp"
#include "io/atomic_file.hpp"
#include "io/console.hpp"
#include "io/hdf5_format.hpp"
#include "io/hdf5_view.hpp"
#include "kernels/rollout_statistics.hpp"
#include "modules/dynamics/register.hpp"
#include "modules/encoder/register.hpp"

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
  if (!model.empty()) check_model_file(model, "rollout.model", ctx.config);
  check_output_file(ctx.output_path(".h5"), "output.name", ctx.output_dir);
  const std::string save = ctx.config.get_string("rollout.save_model");
  if (!save.empty()) check_output_file(save, "rollout.save_model", ctx.output_dir);
}

int run_rollout_mode(const RunContext& ctx) {
  const Config& c = ctx.config;
  Kokkos::Profiling::pushRegion("hpt::rollout_mode");
  Registry<Encoder> encoders("encoder");
  register_encoder_styles(encoders);
  Registry<Dynamics> dynamics_styles("dynamics");
  register_dynamics_styles(dynamics_styles);
  auto encoder = encoders.create(c.get_string("encoder.style"), c);
  auto dynamics = dynamics_styles.create(c.get_string("dynamics.style"), c);

  const std::string model = c.get_string("rollout.model");
  dynamics->initialize(std::uint64_t(c.get_int("dynamics.seed")));  // also zeroes the latents
  if (!model.empty()) load_model_file(*dynamics, model);

  // Encode the (synthetic) training history of one run.
  auto history = encoder->create_history(1);
  SyntheticHistorySpec spec;
  spec.steps = int(c.get_int("rollout.history"));
  spec.initial_loss = c.get_real("rollout.initial_loss");
  spec.final_loss = c.get_real("rollout.final_loss");
  spec.noise = c.get_real("rollout.noise");
  spec.seed = std::uint64_t(c.get_int("run.seed"));
  View2<real> features("hpt::features", 1, kFeatures);
  // Encoded at every step, as in training, so the normaliser has seen the whole history.
  fill_synthetic_history(history, spec, [&] { encoder->encode(history, features); });
  View1<LossState<real>> loss_states("hpt::loss_states", 1);
  encoder->extract_loss_state(history, loss_states);

  RolloutInputs<real> in;
  in.x0 = Kokkos::subview(features, 0, Kokkos::ALL());
  in.loss_states = loss_states;
  in.run = 0;
  in.norm_mean = encoder->normalizer_mean(0);
  in.norm_inv_std = encoder->normalizer_inv_std(0);
  RolloutSettings settings;
  settings.horizon = int(c.get_int("rollout.horizon"));
  settings.scenarios = int(c.get_int("rollout.scenarios"));
  settings.seed = std::uint64_t(c.get_int("run.seed"));
  settings.feature_update = encoder->feature_update();
  settings.clamp = encoder->clamp();
  const int E = dynamics->members(), Y = settings.horizon, N = settings.scenarios;
  RolloutOutputs<real> out(N, E, dynamics->hidden(), Y);
  RolloutStatistics<real> stats(E, Y);

  Kokkos::fence();
  Kokkos::Timer timer;
  dynamics->rollout(in, settings, out);
  compute_rollout_statistics(ExecSpace(), out.loss_paths, stats);
  Kokkos::fence();
  const double seconds = timer.seconds();
  Kokkos::Profiling::popRegion();

  // Console summary at a few horizons.
  auto h = [](const auto& v) {
    return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  };
  const auto mean = h(stats.mean_loss);
  const auto q = h(stats.loss_quantiles);
  const auto tot = h(stats.total_std);
  const auto alea = h(stats.aleatoric_var);
  const auto epi = h(stats.epistemic_var);
  const auto smooth = h(stats.smoothness);
  io::TextTable table(
      {"step", "mean L", "q05", "q50", "q95", "std log L", "aleatoric var", "epistemic var"});
  for (int k : std::set<int>{0, std::min(1, Y), Y / 4, Y / 2, (3 * Y) / 4, Y}) {
    table.add_row({std::to_string(k), io::fmt(mean(k)), io::fmt(q(k, 0)), io::fmt(q(k, 1)),
                   io::fmt(q(k, 2)), io::fmt(tot(k)), io::fmt(alea(k)), io::fmt(epi(k))});
  }
  std::cout << "\nrollout: " << N << " scenarios x " << E << " members x " << Y << " steps ("
            << dynamics->style() << ", H " << dynamics->hidden() << ", S " << dynamics->stochastic()
            << ", encoder " << encoder->style() << ") in " << io::fmt(seconds * 1e3) << " ms ("
            << io::fmt(Y > 0 ? seconds / Y * 1e6 : 0.0) << " us per step)\n"
            << table.str() << "smoothness " << io::fmt(smooth(0)) << "\n";

  // Output file, written atomically.
  const std::string path = ctx.output_path(".h5");
  {
    io::AtomicH5Writer writer(path);
    io::H5File& f = writer.file();
    io::write_hpt_header(f, io::HptFileKind::Rollout, ctx.resolved_ini);
    io::H5Group root = f.root();
    root.write_int_attribute("horizon", Y);
    root.write_int_attribute("scenarios", N);
    root.write_int_attribute("members", E);
    root.write_double_attribute("seconds", seconds);
    if (c.get_bool("rollout.write_paths")) io::write_view(root, "paths", out.loss_paths);
    io::write_view(root, "features", features);
    io::H5Group g = root.create_group("stats");
    io::write_view(g, "mean_loss", stats.mean_loss);
    io::write_view(g, "loss_quantiles", stats.loss_quantiles);
    io::write_view(g, "aleatoric_var", stats.aleatoric_var);
    io::write_view(g, "epistemic_var", stats.epistemic_var);
    io::write_view(g, "total_std", stats.total_std);
    io::write_view(g, "mean_step_delta", stats.mean_step_delta);
    io::write_view(g, "trajectory_var", stats.trajectory_var);
    io::write_view(g, "mean_hidden_norm", out.mean_hidden_norm);
    g.write_double_attribute("smoothness", double(smooth(0)));
    writer.commit();
  }
  std::cout << "wrote " << path << "\n";
  const std::string save = c.get_string("rollout.save_model");
  if (!save.empty()) {
    save_model_file(*dynamics, save, ctx.resolved_ini);
    std::cout << "wrote model " << save << "\n";
  }
  return 0;
}

}  // namespace hpt::app
