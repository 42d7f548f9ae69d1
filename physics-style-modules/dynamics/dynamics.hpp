#pragma once
// The `Dynamics` style interface (docs/method.md#rssm-ensemble): a host class owning a learned
// model of the training process (its parameters and the per-member latents h) that can run ensemble
// rollouts (docs/method.md#ensemble-rollout).
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/gru_weights.hpp"

namespace hpt {

// A 1-D view over a parameter tensor's contiguous data (it does not own the memory).
using ParameterSpan =
    Kokkos::View<real*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

class Dynamics {
 public:
  // fn(name, data, shape): shape is the tensor's logical shape (row-major), data its elements.
  using ParameterVisitor = std::function<void(const std::string& name, const ParameterSpan& data,
                                              const std::vector<std::size_t>& shape)>;

  virtual ~Dynamics() = default;

  virtual std::string style() const = 0;
  virtual int members() const = 0;     // E
  virtual int hidden() const = 0;      // H
  virtual int stochastic() const = 0;  // S
  virtual int input() const = 0;       // I
  virtual GruReset gru_reset() const = 0;

  // Seeded initialisation of every parameter (identical on every backend); latents are zeroed.
  virtual void initialize(std::uint64_t seed) = 0;
  // Visits every parameter tensor in a fixed order (for checkpoints: save and load in place).
  virtual void for_each_parameter(const ParameterVisitor& fn) const = 0;
  // The latents h (E, H) the next rollout starts from.
  virtual View2<real> latents() const = 0;

  // Ensemble rollout from the current latents; `out` was built as RolloutOutputs(N, E, H, Y).
  virtual void rollout(const RolloutInputs<real>& in, const RolloutSettings& settings,
                       const RolloutOutputs<real>& out) const = 0;
};

}  // namespace hpt
