#pragma once
// Chooses the rollout kernel from the backend and the sizes. All compute
// docs/method.md#ensemble-rollout with the same random draws; they differ only in the order of
// their sums.
//  - GPU, few paths (persistent_rollout_supported): the persistent kernel, weights resident on chip
//    across the steps as far as they fit (the rest read from L2), the teams of a path meeting at a
//    counter barrier each step;
//  - a CPU with the host's BLAS, reset After and at least kRolloutGemmScenarios scenarios: the
//    matrix-product form (each step's products for blocks of a member's scenarios as GEMMs);
//  - at least rollout_tile_rows scenarios: the tiled kernel with tiles of that many scenarios, so
//    each weight read serves a tile (a matrix product per step instead of a matrix-vector one);
//  - otherwise, on a CPU the tiled kernel with tiles of one scenario (each thread owns GRU units,
//    the teams share the host threads), on a GPU the team-per-path ensemble_rollout.
#include <string>

#include "kernels/ensemble_rollout.hpp"
#include "kernels/ensemble_rollout_gemm.hpp"
#include "kernels/ensemble_rollout_persistent.hpp"
#include "kernels/ensemble_rollout_tiled.hpp"
#include "kernels/rollout_kernel.hpp"

namespace hpt {

// Scenarios from which a CPU with the host's BLAS runs the rollout as matrix products.
constexpr int kRolloutGemmScenarios = 64;

template <class Space>
std::string rollout_kernel_name(const RolloutKernel k) {
  switch (k) {
    case RolloutKernel::TeamPerPath:
      return "team-per-path";
    case RolloutKernel::Persistent:
      return "persistent";
    case RolloutKernel::Tiled:
      return "tiled-1";
    case RolloutKernel::TiledWide:
      return "tiled-" + std::to_string(rollout_tile_rows<Space>());
    case RolloutKernel::Gemm:
      return "gemm";
  }
  return "?";
}

template <class Space, class Real>
RolloutKernel choose_rollout_kernel(int E, int N, int H, int I, int S,
                                    GruReset reset = GruReset::After) {
  if (persistent_rollout_supported<Space, Real>(E, N, H, I, S)) return RolloutKernel::Persistent;
  const bool gpu = detail::team_vector_length<Space>() > 1;
  if (!gpu && reset == GruReset::After && N >= kRolloutGemmScenarios &&
      rollout_gemm_uses_host_blas<Space>())
    return RolloutKernel::Gemm;
  if (N >= rollout_tile_rows<Space>()) return RolloutKernel::TiledWide;
  return gpu ? RolloutKernel::TeamPerPath : RolloutKernel::Tiled;
}

// Whether kernel k can run these sizes on Space (the persistent kernel needs its teams resident at
// once; the matrix-product form, reset After).
template <class Space, class Real>
bool rollout_kernel_runs(const RolloutKernel k, int E, int N, int H, int I, int S,
                         GruReset reset = GruReset::After) {
  if (k == RolloutKernel::Persistent)
    return persistent_rollout_supported<Space, Real>(E, N, H, I, S);
  if (k == RolloutKernel::Gemm) return reset == GruReset::After;
  return true;
}

// FLOPs kernel k executes per member-step (docs/bench.md#flop-counts): the tiled kernels skip the
// per-step product of the columns of x that stay constant along a path; the others compute the
// full rollout_flops_per_member_step.
inline double rollout_executed_flops_per_member_step(const RolloutKernel k, int hidden, int input,
                                                     int stochastic, FeatureUpdate mode,
                                                     int scenarios, int horizon) {
  if (k == RolloutKernel::Tiled || k == RolloutKernel::TiledWide)
    return tiled_rollout_executed_flops_per_member_step(hidden, input, stochastic, mode, scenarios,
                                                        horizon);
  return rollout_flops_per_member_step(hidden, input, stochastic);
}

// Runs kernel k (one that rollout_kernel_runs accepts for these sizes), in `workspace` where the
// caller keeps one between calls.
template <class Space, class Real>
void ensemble_rollout_with(
    const RolloutKernel k, const Space& space,
    const RssmParams<Real, typename Space::memory_space>& params, const GruReset reset,
    const View2<Real, typename Space::memory_space>& h0,
    const RolloutInputs<Real, typename Space::memory_space>& in, const RolloutSettings& settings,
    const RolloutOutputs<Real, typename Space::memory_space>& out,
    RolloutWorkspace<Real, typename Space::memory_space>* workspace = nullptr) {
  switch (k) {
    case RolloutKernel::Persistent:
      ensemble_rollout_persistent(space, params, reset, h0, in, settings, out, 0, workspace);
      break;
    case RolloutKernel::TiledWide:
      ensemble_rollout_tiled<rollout_tile_rows<Space>()>(space, params, reset, h0, in, settings,
                                                         out);
      break;
    case RolloutKernel::Tiled:
      ensemble_rollout_tiled<1>(space, params, reset, h0, in, settings, out);
      break;
    case RolloutKernel::TeamPerPath:
      ensemble_rollout(space, params, reset, h0, in, settings, out);
      break;
    case RolloutKernel::Gemm:
      ensemble_rollout_gemm(space, params, reset, h0, in, settings, out);
      break;
  }
}

template <class Space, class Real>
void ensemble_rollout_auto(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const GruReset reset, const View2<Real, typename Space::memory_space>& h0,
    const RolloutInputs<Real, typename Space::memory_space>& in, const RolloutSettings& settings,
    const RolloutOutputs<Real, typename Space::memory_space>& out,
    RolloutWorkspace<Real, typename Space::memory_space>* workspace = nullptr) {
  ensemble_rollout_with(
      choose_rollout_kernel<Space, Real>(params.members(), settings.scenarios, params.hidden(),
                                         params.input(), params.stochastic(), reset),
      space, params, reset, h0, in, settings, out, workspace);
}

}  // namespace hpt
