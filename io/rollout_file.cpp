#include "io/rollout_file.hpp"

#include "io/atomic_file.hpp"
#include "io/hdf5_format.hpp"
#include "io/hdf5_view.hpp"

namespace hpt::io {

void write_rollout_file(const std::string& path, const std::string& resolved_deck,
                        const RolloutOutputs<real>& out, const View2<real>& features,
                        const RolloutStatistics<real>& stats, double seconds, bool write_paths) {
  AtomicH5Writer writer(path);
  H5File& f = writer.file();
  write_hpt_header(f, HptFileKind::Rollout, resolved_deck);
  H5Group root = f.root();
  root.write_int_attribute("horizon", int(out.loss_paths.extent(2)) - 1);
  root.write_int_attribute("scenarios", int(out.loss_paths.extent(0)));
  root.write_int_attribute("members", int(out.loss_paths.extent(1)));
  root.write_double_attribute("seconds", seconds);
  if (write_paths) write_view(root, "paths", out.loss_paths);
  write_view(root, "features", features);
  H5Group g = root.create_group("stats");
  write_view(g, "mean_loss", stats.mean_loss);
  write_view(g, "loss_quantiles", stats.loss_quantiles);
  write_view(g, "aleatoric_var", stats.aleatoric_var);
  write_view(g, "epistemic_var", stats.epistemic_var);
  write_view(g, "total_std", stats.total_std);
  write_view(g, "mean_step_delta", stats.mean_step_delta);
  write_view(g, "trajectory_var", stats.trajectory_var);
  write_view(g, "mean_hidden_norm", out.mean_hidden_norm);
  const auto smooth = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), stats.smoothness);
  g.write_double_attribute("smoothness", double(smooth(0)));
  writer.commit();
}

}  // namespace hpt::io
