#pragma once
// The `UpdatePredictor` style interface: during a predict block the parameters advance without a
// backward pass, by extrapolating what the real steps did. A predictor is bound to the model's flat
// ParameterStore, is shown the parameters after every real step (observe), and from the start of a
// block (begin_block, at the newest observed parameters theta_t) writes the parameters predicted k
// steps ahead (predict). It extrapolates parameters or real updates only, never optimizer moments.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/types.hpp"
#include "kernels/parameter_store.hpp"
#include "kernels/update_kernels.hpp"

namespace hpt {

template <class Space, class Real>
class UpdatePredictorBase {
 public:
  using memory_space = typename Space::memory_space;
  using store_type = ParameterStore<Real, memory_space>;
  using buffer_type = View1<Real, memory_space>;
  struct NamedBuffer {
    std::string name;
    buffer_type view;
  };

  virtual ~UpdatePredictorBase() = default;
  UpdatePredictorBase(const UpdatePredictorBase&) = delete;
  UpdatePredictorBase& operator=(const UpdatePredictorBase&) = delete;

  virtual std::string style() const = 0;
  virtual std::string summary() const { return style(); }

  // Binds to `params` (allocated) and allocates the snapshot ring; nothing observed yet.
  void bind(store_type& params) {
    HPT_REQUIRE(params.allocated(), "UpdatePredictor::bind before the parameters were allocated");
    params_ = &params;
    ring_.clear();
    for (int i = 0; i < ring_capacity(); ++i)
      ring_.push_back(params.make_buffer("hpt::update_snapshot_" + std::to_string(i)));
    head_ = count_ = 0;
    allocate_extra(params);
  }
  // Records the parameters after a real step.
  void observe() {
    HPT_REQUIRE(params_ != nullptr, "UpdatePredictor::observe before bind()");
    if (!ring_.empty() && keeps(count_)) {
      params_->snapshot(ring_[std::size_t(head_)]);
      head_ = (head_ + 1) % int(ring_.size());
    }
    ++count_;
    after_observe();
  }
  // After an accepted predict block moved the parameters from `block_start` to where they are now:
  // every kept snapshot moves by the same displacement, so later differences between snapshots see
  // the real steps only, not the jump.
  void shift_history(const buffer_type& block_start) {
    HPT_REQUIRE(params_ != nullptr, "UpdatePredictor::shift_history before bind()");
    for (auto& snap : ring_)
      linear_combination<Space, Real>(space_, snap, snap, 1.0, params_->values(), 1.0, block_start,
                                      -1.0);
    shift_extra(block_start);
  }
  // Forgets the observed steps (after the parameters were restored from an older snapshot).
  void reset() { head_ = count_ = 0; }
  // Enough real steps were observed to predict.
  bool ready() const { return count_ >= steps_needed(); }
  // Fits the predictor at the newest observed parameters theta_t (the start of a predict block).
  virtual void begin_block() = 0;
  // Writes into the parameters theta_{t+k}, k >= 1 steps after the block's start.
  virtual void predict(int k) = 0;

  // State buffers for checkpoints and rollbacks, and the counters.
  std::vector<NamedBuffer> state_views() const {
    std::vector<NamedBuffer> out;
    for (std::size_t i = 0; i < ring_.size(); ++i)
      out.push_back({"snapshot_" + std::to_string(i), ring_[i]});
    append_extra(out);
    return out;
  }
  long observed() const { return count_; }
  int ring_head() const { return head_; }
  void set_counters(long observed, int head) { count_ = observed, head_ = head; }

 protected:
  UpdatePredictorBase() = default;
  virtual int ring_capacity() const = 0;  // parameter snapshots kept
  // Whether the observation with this index (0 = the first since bind or reset) enters the ring.
  virtual bool keeps(long /*index*/) const { return true; }
  virtual long steps_needed() const = 0;  // real steps observed before ready()
  virtual void allocate_extra(const store_type&) {}
  virtual void after_observe() {}
  // Moves state other than the snapshot ring by the accepted block's displacement.
  virtual void shift_extra(const buffer_type& /*block_start*/) {}
  virtual void append_extra(std::vector<NamedBuffer>&) const {}

  // The snapshot `lag` entries before the newest kept one (lag 0 = newest; with every observation
  // kept, `lag` real steps before); lag < min(count, capacity).
  const buffer_type& snapshot(int lag) const {
    const int cap = int(ring_.size());
    HPT_REQUIRE(lag >= 0 && lag < cap && lag < count_,
                "UpdatePredictor: snapshot lag out of range");
    return ring_[std::size_t(((head_ - 1 - lag) % cap + cap) % cap)];
  }

  Space space_;
  store_type* params_ = nullptr;

 private:
  std::vector<buffer_type> ring_;
  int head_ = 0;
  long count_ = 0;
};

// The application's predictor type: working precision on the default execution space.
using UpdatePredictor = UpdatePredictorBase<ExecSpace, real>;

}  // namespace hpt
