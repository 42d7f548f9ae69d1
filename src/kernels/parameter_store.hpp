#pragma once
// All trainable parameters of a model in ONE contiguous device buffer, with a table of named
// tensors (name, offset, shape) and per-tensor unmanaged views into it; gradients live in a second
// buffer of the same layout. Snapshot/rollback, optimizer updates, global norms and parameter
// extrapolation are then single kernels over one buffer (docs/architecture.md#host-and-device,
// docs/method.md#update-predictors).
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/types.hpp"

namespace hpt {

// One named tensor of the flat buffer. rank 1: shape (rows); rank 2: shape (rows, cols), row-major.
struct TensorInfo {
  std::string name;
  std::size_t offset = 0;  // first element in the flat buffer
  std::size_t size = 0;    // rows * cols
  int rank = 1;
  int rows = 0;
  int cols = 1;
};

// Fixed-size pieces of the flat buffer that never straddle two tensors, so per-tensor reductions
// are load-balanced kernels over chunks (a large matrix is many chunks, a bias one).
template <class Mem>
struct ChunkTable {
  View1<int, Mem> tensor;          // tensor of each chunk
  View1<std::int64_t, Mem> begin;  // first element (flat index)
  View1<std::int64_t, Mem> end;    // one past the last element
  int count = 0;
};

template <class Real, class Mem = MemSpace>
class ParameterStore {
 public:
  using buffer_type = View1<Real, Mem>;
  using matrix_type =
      Kokkos::View<Real**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using vector_type =
      Kokkos::View<Real*, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr std::int64_t kChunkSize = 4096;

  // Layout phase: declare every tensor, then allocate() once. Returns the tensor's index.
  int add_matrix(const std::string& name, int rows, int cols) { return add(name, 2, rows, cols); }
  int add_vector(const std::string& name, int n) { return add(name, 1, n, 1); }

  // Allocates the value and gradient buffers (zero-filled) and the per-tensor views.
  void allocate() {
    HPT_REQUIRE(!allocated_, "ParameterStore::allocate called twice");
    values_ = buffer_type("hpt::parameters", size_);
    gradients_ = buffer_type("hpt::gradients", size_);
    for (const auto& t : tensors_) {
      value_vec_.emplace_back(values_.data() + t.offset, t.size);
      grad_vec_.emplace_back(gradients_.data() + t.offset, t.size);
      value_mat_.emplace_back(values_.data() + t.offset, t.rows, t.cols);
      grad_mat_.emplace_back(gradients_.data() + t.offset, t.rows, t.cols);
    }
    build_chunks();
    allocated_ = true;
  }

  bool allocated() const { return allocated_; }
  std::size_t size() const { return size_; }
  int num_tensors() const { return int(tensors_.size()); }
  const TensorInfo& tensor(int i) const { return tensors_.at(std::size_t(i)); }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // Index of the named tensor, or -1.
  int find(const std::string& name) const {
    for (std::size_t i = 0; i < tensors_.size(); ++i)
      if (tensors_[i].name == name) return int(i);
    return -1;
  }

  buffer_type values() const { return values_; }
  buffer_type gradients() const { return gradients_; }
  // Per-tensor views into the flat buffers (a rank-1 tensor's matrix view is rows x 1).
  matrix_type value_matrix(int i) const { return value_mat_.at(std::size_t(i)); }
  matrix_type grad_matrix(int i) const { return grad_mat_.at(std::size_t(i)); }
  vector_type value_vector(int i) const { return value_vec_.at(std::size_t(i)); }
  vector_type grad_vector(int i) const { return grad_vec_.at(std::size_t(i)); }
  const ChunkTable<Mem>& chunks() const { return chunks_; }

  // A zero-filled flat buffer of the same layout (snapshots, optimizer state, predictor history).
  buffer_type make_buffer(const std::string& label) const {
    HPT_REQUIRE(allocated_, "ParameterStore used before allocate()");
    return buffer_type(label, size_);
  }
  // dst <- values, device to device.
  void snapshot(const buffer_type& dst) const {
    HPT_REQUIRE(dst.extent(0) == size_, "snapshot buffer has the wrong size");
    Kokkos::deep_copy(dst, values_);
  }
  // values <- src, device to device.
  void restore(const buffer_type& src) {
    HPT_REQUIRE(src.extent(0) == size_, "restore buffer has the wrong size");
    Kokkos::deep_copy(values_, src);
  }

 private:
  int add(const std::string& name, int rank, int rows, int cols) {
    HPT_REQUIRE(!allocated_, "ParameterStore: tensor '" + name + "' added after allocate()");
    HPT_REQUIRE(rows > 0 && cols > 0, "ParameterStore: tensor '" + name + "' has an empty shape");
    HPT_REQUIRE(find(name) < 0, "ParameterStore: tensor '" + name + "' added twice");
    TensorInfo t;
    t.name = name;
    t.offset = size_;
    t.size = std::size_t(rows) * std::size_t(cols);
    t.rank = rank;
    t.rows = rows;
    t.cols = cols;
    size_ += t.size;
    tensors_.push_back(t);
    return int(tensors_.size()) - 1;
  }

  void build_chunks() {
    std::vector<int> tensor;
    std::vector<std::int64_t> begin, end;
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
      const auto first = std::int64_t(tensors_[i].offset);
      const auto last = first + std::int64_t(tensors_[i].size);
      for (std::int64_t b = first; b < last; b += kChunkSize) {
        tensor.push_back(int(i));
        begin.push_back(b);
        end.push_back(b + kChunkSize < last ? b + kChunkSize : last);
      }
    }
    chunks_.count = int(tensor.size());
    chunks_.tensor = View1<int, Mem>("hpt::chunk_tensor", tensor.size());
    chunks_.begin = View1<std::int64_t, Mem>("hpt::chunk_begin", begin.size());
    chunks_.end = View1<std::int64_t, Mem>("hpt::chunk_end", end.size());
    auto h_tensor = Kokkos::create_mirror_view(chunks_.tensor);
    auto h_begin = Kokkos::create_mirror_view(chunks_.begin);
    auto h_end = Kokkos::create_mirror_view(chunks_.end);
    for (std::size_t c = 0; c < tensor.size(); ++c) {
      h_tensor(c) = tensor[c];
      h_begin(c) = begin[c];
      h_end(c) = end[c];
    }
    Kokkos::deep_copy(chunks_.tensor, h_tensor);
    Kokkos::deep_copy(chunks_.begin, h_begin);
    Kokkos::deep_copy(chunks_.end, h_end);
  }

  std::vector<TensorInfo> tensors_;
  std::size_t size_ = 0;
  bool allocated_ = false;
  buffer_type values_, gradients_;
  std::vector<vector_type> value_vec_, grad_vec_;
  std::vector<matrix_type> value_mat_, grad_mat_;
  ChunkTable<Mem> chunks_;
};

// Counter-based random initialisation: element i gets a value that is a pure function of
// (seed, stream_a, stream_b, i), so every backend and thread count produces the same parameters.
template <class Space, class Real>
HPT_LAUNCHER void fill_normal(const Space& space, View1<Real, typename Space::memory_space> v,
                              std::uint64_t seed, std::uint64_t stream_a, std::uint64_t stream_b,
                              double stddev) {
  const std::int64_t n = std::int64_t(v.extent(0));
  Kokkos::parallel_for(
      "hpt::fill_normal", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        v(i) = Real(stddev * rng::normal(rng::key(seed, stream_a, stream_b, std::uint64_t(i))));
      });
}

// Uniform in (-bound, bound), same keying as fill_normal. A functor rather than a lambda: nvcc 11.8
// mis-types an extended lambda's enclosing template here when callers sit in other translation
// units.
template <class Real, class Mem>
struct FillUniform {
  View1<Real, Mem> v;
  std::uint64_t seed, stream_a, stream_b;
  double bound;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const double u = rng::uniform(rng::key(seed, stream_a, stream_b, std::uint64_t(i)));
    v(i) = Real(bound * (2.0 * u - 1.0));
  }
};

template <class Space, class Real>
void fill_uniform(const Space& space, View1<Real, typename Space::memory_space> v,
                  std::uint64_t seed, std::uint64_t stream_a, std::uint64_t stream_b,
                  double bound) {
  Kokkos::parallel_for(
      "hpt::fill_uniform", Kokkos::RangePolicy<Space>(space, 0, std::int64_t(v.extent(0))),
      FillUniform<Real, typename Space::memory_space>{v, seed, stream_a, stream_b, bound});
}

}  // namespace hpt
