#pragma once
// The `Model` style interface: a trainable network whose parameters live in one flat
// ParameterStore. forward() evaluates a batch (loss and accuracy), backward() fills the flat
// gradient buffer for the batch of the latest forward(). Scratch for activations is allocated once
// by reserve_batch().
#include <cstdint>
#include <string>

#include "core/types.hpp"
#include "kernels/losses.hpp"
#include "kernels/parameter_store.hpp"

namespace hpt {

// One batch on the device. Classification sets `labels`; regression sets `targets`. Rows of x are
// samples, columns features.
template <class Real, class Mem = MemSpace>
struct Batch {
  View2<const Real, Mem> x;        // [B][inputs]
  View1<const int, Mem> labels;    // [B] class indices, or empty
  View2<const Real, Mem> targets;  // [B][outputs] regression targets, or empty
  int size() const { return int(x.extent(0)); }
};

template <class Space, class Real>
class ModelBase {
 public:
  using execution_space = Space;
  using memory_space = typename Space::memory_space;
  using store_type = ParameterStore<Real, memory_space>;
  using batch_type = Batch<Real, memory_space>;

  virtual ~ModelBase() = default;

  // e.g. "mlp 64-128-10 relu cross_entropy, 9610 parameters"
  virtual std::string summary() const = 0;
  virtual int input_size() const = 0;
  virtual int output_size() const = 0;

  // The flat parameters and gradients (tensor names, e.g. "dense0.weight").
  virtual store_type& parameters() = 0;
  virtual const store_type& parameters() const = 0;

  // Re-initialises every parameter from `seed` (identical on every backend).
  virtual void initialize(std::uint64_t seed) = 0;

  // Allocates scratch for batches of up to `max_batch` rows (grows only; call once at setup).
  virtual void reserve_batch(int max_batch) = 0;
  virtual int reserved_batch() const = 0;

  // Loss and accuracy of the batch; keeps the activations for backward().
  virtual LossValue forward(const batch_type& batch) = 0;
  // Overwrites parameters().gradients() with d loss / d theta for the batch of the latest forward()
  // (same Views; checked).
  virtual void backward(const batch_type& batch) = 0;

  // Outputs of the latest forward() (logits for cross-entropy), [B][outputs].
  virtual View2<const Real, memory_space> outputs() const = 0;
};

// The application's model type: working precision on the default execution space.
using Model = ModelBase<ExecSpace, real>;

}  // namespace hpt
