#pragma once
// Optimizer updates as kernels over the flat parameter buffer (kernels/parameter_store.hpp), with
// the step telemetry of docs/method.md#telemetry computed on the device in the same passes:
//   1. tensor_sq_norms + finish_gradient_norms: per-tensor and global gradient norms and the clip
//      factor, written into a small device `stats` buffer (layout: TelemetrySlot, then one gradient
//      norm per tensor);
//   2. sgd_step / adamw_step: the update, with the gradient scaled by stats(kClipScale) (skipped,
//      leaving parameters and state unchanged, when stats(kGradNorm) is not finite), reducing
//      ||dtheta||^2, ||theta||^2, <dtheta, dtheta_prev>, ||dtheta_prev||^2 and the moment sums
//      (one pass on the host; on a device the sums in a read-only pass of the same formulas before
//      the update, kernels/register_reduce.hpp update_and_reduce);
//   3. finish_update_telemetry: norms, cosine and moment summary into stats.
// The host then fetches `stats` once.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"
#include "kernels/parameter_store.hpp"
#include "kernels/per_tensor.hpp"
#include "kernels/register_reduce.hpp"
#include "kernels/sum_array.hpp"

namespace hpt {

enum TelemetrySlot : int {
  kGradNorm = 0,   // global L2 norm of the gradient (before clipping)
  kClipScale,      // factor applied to the gradient: min(1, max_norm / (norm + 1e-6)), or 1
  kUpdateNorm,     // ||theta_new - theta_old|| (the update actually applied)
  kWeightNorm,     // ||theta_new||
  kUpdateCos,      // cosine between this update and the previous one (0 if either is 0)
  kMoment1,        // SGD: ||momentum buffer||; Adam: mean |m|
  kMoment2,        // SGD: 0; Adam: mean v
  kMoment1Std,     // SGD: std of |momentum buffer| over elements; Adam: std of |m|
  kMoment2Std,     // SGD: 0; Adam: std of v
  kTelemetrySlots  // per-tensor gradient norms follow, one per tensor
};

// Sums of one update pass: dtheta^2, theta^2, <dtheta, prev>, prev^2, then the moment sums
// SGD: [4] buf^2, [6] |buf|; Adam: [4] |m|, [5] v, [6] m^2, [7] v^2.
using UpdateSums = SumArray<8>;

// out_sq(t) = squared L2 norm of tensor t of `buffer` (chunked, atomics across chunks). out_sq is
// zeroed first; it has one entry per tensor.
template <class Space, class Real>
HPT_LAUNCHER void tensor_sq_norms(const Space& space,
                                  View1<const Real, typename Space::memory_space> buffer,
                                  const ChunkTable<typename Space::memory_space>& chunks,
                                  View1<double, typename Space::memory_space> out_sq) {
  reduce_per_tensor(
      space, "hpt::tensor_sq_norms", chunks, out_sq, KOKKOS_LAMBDA(const std::int64_t k) {
        const double g = double(buffer(k));
        return g * g;
      });
}

// stats(kTelemetrySlots + t) holds squared tensor norms on entry and norms on exit; sets
// stats(kGradNorm) and stats(kClipScale) (PyTorch clip_grad_norm_: scale = max_norm / (norm + 1e-6)
// clamped to 1; max_norm <= 0 disables clipping). A non-finite norm gives scale 1 so that the
// divergence monitor sees the non-finite values rather than a silently zeroed update.
template <class Space>
HPT_LAUNCHER void finish_gradient_norms(const Space& space,
                                        View1<double, typename Space::memory_space> stats,
                                        int num_tensors, double max_norm) {
  HPT_REQUIRE(int(stats.extent(0)) >= kTelemetrySlots + num_tensors,
              "finish_gradient_norms: stats buffer too short");
  Kokkos::parallel_for(
      "hpt::finish_gradient_norms", Kokkos::RangePolicy<Space>(space, 0, 1),
      KOKKOS_LAMBDA(const int) {
        double total = 0.0;
        for (int t = 0; t < num_tensors; ++t) {
          const double sq = stats(kTelemetrySlots + t);
          total += sq;
          stats(kTelemetrySlots + t) = math::sqrt(sq);
        }
        const double norm = math::sqrt(total);
        stats(kGradNorm) = norm;
        double scale = 1.0;
        if (max_norm > 0.0 && math::isfinite(norm))
          scale = math::fmin(1.0, max_norm / (norm + 1e-6));
        stats(kClipScale) = scale;
      });
}

// buffer *= stats(slot) (e.g. clip the gradient in place with slot = kClipScale).
template <class Space, class Real>
HPT_LAUNCHER void scale_by_stat(const Space& space,
                                View1<Real, typename Space::memory_space> buffer,
                                View1<const double, typename Space::memory_space> stats, int slot) {
  Kokkos::parallel_for(
      "hpt::scale_by_stat", Kokkos::RangePolicy<Space>(space, 0, std::int64_t(buffer.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t k) { buffer(k) *= Real(stats(slot)); });
}

struct SgdHyper {
  double lr = 0.0;
  double momentum = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool first_step = true;  // PyTorch starts the momentum buffer as a copy of the first gradient
};

// SGD, PyTorch semantics with dampening 0: g = s*grad + wd*theta; buf = g on the first step, else
// mu*buf + g; d = nesterov ? g + mu*buf : buf (d = g when mu == 0); theta -= lr*d.
// s = stats(kClipScale). prev_update holds the previous applied update and receives this one.
// `momentum_buf` may be empty when momentum == 0. sums receives UpdateSums (moment1 = ||buf||^2).
template <class Space, class Real>
HPT_LAUNCHER void sgd_step(const Space& space, View1<Real, typename Space::memory_space> theta,
                           View1<const Real, typename Space::memory_space> grad,
                           View1<Real, typename Space::memory_space> momentum_buf,
                           View1<Real, typename Space::memory_space> prev_update,
                           View1<const double, typename Space::memory_space> stats,
                           const SgdHyper& h,
                           Kokkos::View<UpdateSums, typename Space::memory_space> sums) {
  const std::int64_t n = std::int64_t(theta.extent(0));
  HPT_REQUIRE(std::int64_t(grad.extent(0)) == n && std::int64_t(prev_update.extent(0)) == n &&
                  (h.momentum == 0.0 || std::int64_t(momentum_buf.extent(0)) == n),
              "sgd_step: buffer sizes do not agree");
  const Real lr = Real(h.lr), mu = Real(h.momentum), wd = Real(h.weight_decay);
  const bool use_momentum = h.momentum != 0.0, nesterov = h.nesterov, first = h.first_step;
  update_and_reduce(
      space, "hpt::sgd_step", n,
      KOKKOS_LAMBDA(const std::int64_t k, UpdateSums& acc, const bool write) {
        const Real old = theta(k);
        if (!math::isfinite(stats(kGradNorm))) {  // skipped step: nothing changes
          acc.v[1] += double(old) * double(old);
          if (use_momentum) {
            acc.v[4] += double(momentum_buf(k)) * double(momentum_buf(k));
            acc.v[6] += double(math::fabs(momentum_buf(k)));
          }
          return;
        }
        const Real scale = Real(stats(kClipScale));
        Real g = scale * grad(k) + wd * old;
        if (use_momentum) {
          const Real buf = first ? g : mu * momentum_buf(k) + g;
          if (write) momentum_buf(k) = buf;
          acc.v[4] += double(buf) * double(buf);
          acc.v[6] += double(math::fabs(buf));
          g = nesterov ? g + mu * buf : buf;
        }
        const Real updated = old - lr * g;
        const Real delta = updated - old;
        const Real prev = prev_update(k);
        if (write) theta(k) = updated, prev_update(k) = delta;
        acc.v[0] += double(delta) * double(delta);
        acc.v[1] += double(updated) * double(updated);
        acc.v[2] += double(delta) * double(prev);
        acc.v[3] += double(prev) * double(prev);
      },
      Kokkos::Sum<UpdateSums, typename Space::memory_space>(sums));
}

struct AdamHyper {
  double lr = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  long step = 1;  // t of this update, starting at 1 (bias corrections 1 - beta^t)
};

// AdamW, PyTorch semantics: theta *= 1 - lr*wd; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
// theta -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps), with g = s*grad,
// s = stats(kClipScale). sums: moment1 = sum |m|, moment2 = sum v.
template <class Space, class Real>
HPT_LAUNCHER void adamw_step(const Space& space, View1<Real, typename Space::memory_space> theta,
                             View1<const Real, typename Space::memory_space> grad,
                             View1<Real, typename Space::memory_space> m,
                             View1<Real, typename Space::memory_space> v,
                             View1<Real, typename Space::memory_space> prev_update,
                             View1<const double, typename Space::memory_space> stats,
                             const AdamHyper& h,
                             Kokkos::View<UpdateSums, typename Space::memory_space> sums) {
  const std::int64_t n = std::int64_t(theta.extent(0));
  HPT_REQUIRE(std::int64_t(grad.extent(0)) == n && std::int64_t(m.extent(0)) == n &&
                  std::int64_t(v.extent(0)) == n && std::int64_t(prev_update.extent(0)) == n,
              "adamw_step: buffer sizes do not agree");
  HPT_REQUIRE(h.step >= 1, "adamw_step: step must start at 1");
  const double bc1 = 1.0 - std::pow(h.beta1, double(h.step));
  const double bc2 = 1.0 - std::pow(h.beta2, double(h.step));
  const Real decay = Real(1.0 - h.lr * h.weight_decay);
  const Real b1 = Real(h.beta1), b2 = Real(h.beta2), eps = Real(h.eps);
  const Real step_size = Real(h.lr / bc1), bc2_sqrt = Real(std::sqrt(bc2));
  update_and_reduce(
      space, "hpt::adamw_step", n,
      KOKKOS_LAMBDA(const std::int64_t k, UpdateSums& acc, const bool write) {
        const Real old = theta(k);
        if (!math::isfinite(stats(kGradNorm))) {  // skipped step: nothing changes
          acc.v[1] += double(old) * double(old);
          acc.v[4] += double(math::fabs(m(k)));
          acc.v[5] += double(v(k));
          acc.v[6] += double(m(k)) * double(m(k));
          acc.v[7] += double(v(k)) * double(v(k));
          return;
        }
        const Real g = Real(stats(kClipScale)) * grad(k);
        const Real mk = b1 * m(k) + (Real(1) - b1) * g;
        const Real vk = b2 * v(k) + (Real(1) - b2) * g * g;
        const Real updated = old * decay - step_size * mk / (math::sqrt(vk) / bc2_sqrt + eps);
        const Real delta = updated - old;
        const Real prev = prev_update(k);
        if (write) m(k) = mk, v(k) = vk, theta(k) = updated, prev_update(k) = delta;
        acc.v[0] += double(delta) * double(delta);
        acc.v[1] += double(updated) * double(updated);
        acc.v[2] += double(delta) * double(prev);
        acc.v[3] += double(prev) * double(prev);
        acc.v[4] += double(math::fabs(mk));
        acc.v[5] += double(vk);
        acc.v[6] += double(mk) * double(mk);
        acc.v[7] += double(vk) * double(vk);
      },
      Kokkos::Sum<UpdateSums, typename Space::memory_space>(sums));
}

enum class MomentSummary : int {
  Sgd = 0,  // moment1 = sqrt(sum buf^2), moment2 = 0
  Adam = 1  // moment1 = sum |m| / n, moment2 = sum v / n
};

// stats(kUpdateNorm .. kMoment2) from the sums of an update pass over n elements.
template <class Space>
HPT_LAUNCHER void finish_update_telemetry(
    const Space& space, Kokkos::View<const UpdateSums, typename Space::memory_space> sums,
    View1<double, typename Space::memory_space> stats, std::int64_t n, MomentSummary kind) {
  HPT_REQUIRE(int(stats.extent(0)) >= kTelemetrySlots, "finish_update_telemetry: stats too short");
  const double inv_n = n > 0 ? 1.0 / double(n) : 0.0;
  Kokkos::parallel_for(
      "hpt::finish_update_telemetry", Kokkos::RangePolicy<Space>(space, 0, 1),
      KOKKOS_LAMBDA(const int) {
        const UpdateSums s = sums();
        stats(kUpdateNorm) = math::sqrt(s.v[0]);
        stats(kWeightNorm) = math::sqrt(s.v[1]);
        const double denom = math::sqrt(s.v[0]) * math::sqrt(s.v[3]);
        stats(kUpdateCos) = denom > 0.0 ? s.v[2] / denom : 0.0;
        // std over elements = sqrt(E[a^2] - E[a]^2), clamped at 0 against rounding.
        auto std_of = [](double mean, double mean_sq) {
          const double var = mean_sq - mean * mean;
          return var > 0.0 ? math::sqrt(var) : 0.0;
        };
        if (kind == MomentSummary::Adam) {
          stats(kMoment1) = s.v[4] * inv_n;
          stats(kMoment2) = s.v[5] * inv_n;
          stats(kMoment1Std) = std_of(s.v[4] * inv_n, s.v[6] * inv_n);
          stats(kMoment2Std) = std_of(s.v[5] * inv_n, s.v[7] * inv_n);
        } else {
          stats(kMoment1) = math::sqrt(s.v[4]);
          stats(kMoment2) = 0.0;
          stats(kMoment1Std) = std_of(s.v[6] * inv_n, s.v[4] * inv_n);
          stats(kMoment2Std) = 0.0;
        }
      });
}

}  // namespace hpt
