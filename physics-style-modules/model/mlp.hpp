#pragma once
// The `mlp` model style: dense layers (GEMMs through Kokkos Kernels) with one hidden activation, an
// identity output layer, and softmax cross-entropy or MSE (docs/method.md#training-problems).
// Tensors in the flat store: dense<l>.weight [out][in] and dense<l>.bias [out] for l = 0 ..
// layers-2.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/types.hpp"
#include "kernels/dense_ops.hpp"
#include "kernels/losses.hpp"
#include "kernels/parameter_store.hpp"
#include "physics-style-modules/model/model.hpp"

namespace hpt {

enum class LossKind : int { CrossEntropy = 0, MeanSquaredError = 1 };
// He: normal(0, sqrt(2/fan_in)) (kaiming_normal); Glorot: uniform(+-sqrt(6/(fan_in+fan_out)))
// (xavier_uniform); Auto: He for relu/gelu, Glorot for tanh. Biases start at 0.
enum class InitScheme : int { He = 0, Glorot = 1, Auto = 2 };

struct MlpOptions {
  std::vector<int> layers;  // input size, hidden sizes..., output size
  Activation activation = Activation::Relu;
  LossKind loss = LossKind::CrossEntropy;
  InitScheme init = InitScheme::Auto;
  std::uint64_t seed = 1;
};

// "64,128,10" -> {64, 128, 10}; throws InputError naming `key` unless it is at least two positive
// integers separated by commas.
std::vector<int> parse_layer_sizes(const std::string& text, const std::string& key);
// [model] options of the mlp style (layers, activation, loss, init; seed from run.seed if
// declared).
MlpOptions mlp_options_from_config(const Config& config);
// Throws InputError when the options cannot describe a network (e.g. cross-entropy on one output).
void validate_mlp_options(const MlpOptions& options);

// Random stream of the mlp's initialisation in rng::key(seed, stream, tensor, element).
constexpr std::uint64_t kMlpInitStream = 0x6d6c70696e6974ULL;

template <class Space, class Real>
class Mlp : public ModelBase<Space, Real> {
 public:
  using base = ModelBase<Space, Real>;
  using typename base::batch_type;
  using typename base::memory_space;
  using typename base::store_type;
  using matrix = View2<Real, memory_space>;
  using const_matrix = View2<const Real, memory_space>;

  explicit Mlp(const MlpOptions& options) : options_(options) {
    validate_mlp_options(options_);
    const int n = num_layers();
    for (int l = 0; l < n; ++l) {
      const int in = options_.layers[std::size_t(l)], out = options_.layers[std::size_t(l) + 1];
      weight_.push_back(params_.add_matrix("dense" + std::to_string(l) + ".weight", out, in));
      bias_.push_back(params_.add_vector("dense" + std::to_string(l) + ".bias", out));
    }
    params_.allocate();
    initialize(options_.seed);
  }

  const MlpOptions& options() const { return options_; }
  int num_layers() const { return int(options_.layers.size()) - 1; }

  std::string summary() const override {
    std::string sizes;
    for (int s : options_.layers) sizes += (sizes.empty() ? "" : "-") + std::to_string(s);
    return "mlp " + sizes + " " + activation_name(options_.activation) + " " +
           (options_.loss == LossKind::CrossEntropy ? "cross_entropy" : "mse") + ", " +
           std::to_string(params_.size()) + " parameters";
  }
  int input_size() const override { return options_.layers.front(); }
  int output_size() const override { return options_.layers.back(); }
  store_type& parameters() override { return params_; }
  const store_type& parameters() const override { return params_; }

  // Drawn by the host execution space into a host mirror and copied once: device math libraries
  // round log/cos differently in the last bit, so this keeps the initial parameters bit-identical
  // on every backend.
  void initialize(std::uint64_t seed) override {
    using HostVector = View1<Real, HostExec::memory_space>;
    const bool he = options_.init == InitScheme::He ||
                    (options_.init == InitScheme::Auto && options_.activation != Activation::Tanh);
    auto host = Kokkos::create_mirror_view(params_.values());
    const auto tensor_on_host = [&](int i) {
      const auto& t = params_.tensor(i);
      return HostVector(Kokkos::subview(host, std::make_pair(t.offset, t.offset + t.size)));
    };
    for (int l = 0; l < num_layers(); ++l) {
      const double fan_in = options_.layers[std::size_t(l)];
      const double fan_out = options_.layers[std::size_t(l) + 1];
      const int w = weight_[std::size_t(l)];
      if (he)
        fill_normal<HostExec, Real>(HostExec(), tensor_on_host(w), seed, kMlpInitStream,
                                    std::uint64_t(w), std::sqrt(2.0 / fan_in));
      else
        fill_uniform<HostExec, Real>(HostExec(), tensor_on_host(w), seed, kMlpInitStream,
                                     std::uint64_t(w), std::sqrt(6.0 / (fan_in + fan_out)));
      Kokkos::deep_copy(tensor_on_host(bias_[std::size_t(l)]), Real(0));
    }
    HostExec().fence();
    Kokkos::deep_copy(params_.values(), host);
  }

  void reserve_batch(int max_batch) override {
    HPT_REQUIRE(max_batch > 0, "Mlp::reserve_batch needs a positive batch size");
    if (max_batch <= reserved_) return;
    reserved_ = max_batch;
    z_.clear();
    a_.clear();
    delta_.clear();
    for (int l = 0; l < num_layers(); ++l) {
      const int out = options_.layers[std::size_t(l) + 1];
      z_.push_back(matrix("hpt::mlp_preactivation", std::size_t(max_batch), std::size_t(out)));
      // The output layer is linear: its activation is its pre-activation.
      a_.push_back(l + 1 < num_layers()
                       ? matrix("hpt::mlp_activation", std::size_t(max_batch), std::size_t(out))
                       : z_.back());
      delta_.push_back(matrix("hpt::mlp_delta", std::size_t(max_batch), std::size_t(out)));
    }
    has_forward_ = false;
  }
  int reserved_batch() const override { return reserved_; }

  LossValue forward(const batch_type& batch) override {
    const int rows = batch.size();
    HPT_REQUIRE(rows > 0 && rows <= reserved_, "Mlp::forward: batch of " + std::to_string(rows) +
                                                   " rows, reserve_batch(" +
                                                   std::to_string(reserved_) + ") was called");
    HPT_REQUIRE(int(batch.x.extent(1)) == input_size(),
                "Mlp::forward: batch has " + std::to_string(batch.x.extent(1)) +
                    " features, the model takes " + std::to_string(input_size()));
    const int n = num_layers();
    for (int l = 0; l < n; ++l) {
      const const_matrix input =
          l == 0 ? batch.x : const_matrix(rows_of(a_[std::size_t(l) - 1], rows));
      dense_forward<Space, Real>(space_, input, params_.value_matrix(weight_[std::size_t(l)]),
                                 params_.value_vector(bias_[std::size_t(l)]), layer_activation(l),
                                 rows_of(z_[std::size_t(l)], rows),
                                 rows_of(a_[std::size_t(l)], rows));
    }
    const const_matrix out = rows_of(z_.back(), rows);
    const matrix grad = rows_of(delta_.back(), rows);
    LossValue value;
    if (options_.loss == LossKind::CrossEntropy) {
      HPT_REQUIRE(batch.labels.extent(0) == std::size_t(rows),
                  "Mlp::forward: cross-entropy needs class labels");
      value = softmax_cross_entropy<Space, Real>(space_, out, batch.labels, grad);
    } else if (batch.targets.extent(0) > 0) {
      HPT_REQUIRE(batch.targets.extent(0) == std::size_t(rows) &&
                      int(batch.targets.extent(1)) == output_size(),
                  "Mlp::forward: targets have the wrong shape");
      value = mean_squared_error<Space, Real>(space_, out, batch.targets, grad);
    } else {
      HPT_REQUIRE(batch.labels.extent(0) == std::size_t(rows),
                  "Mlp::forward: mse needs targets or class labels");
      value = mean_squared_error_onehot<Space, Real>(space_, out, batch.labels, grad);
    }
    has_forward_ = true;
    last_x_ = batch.x.data();
    last_rows_ = rows;
    return value;
  }

  void backward(const batch_type& batch) override {
    HPT_REQUIRE(has_forward_ && batch.x.data() == last_x_ && batch.size() == last_rows_,
                "Mlp::backward must follow forward() on the same batch");
    const int rows = last_rows_;
    for (int l = num_layers() - 1; l >= 0; --l) {
      const std::size_t ul = std::size_t(l);
      const const_matrix input = l == 0 ? batch.x : const_matrix(rows_of(a_[ul - 1], rows));
      // dL/da of the previous layer goes straight into its delta buffer, then becomes dL/dz there.
      const matrix dx = l == 0 ? matrix() : rows_of(delta_[ul - 1], rows);
      dense_backward<Space, Real>(space_, input, params_.value_matrix(weight_[ul]),
                                  rows_of(delta_[ul], rows), params_.grad_matrix(weight_[ul]),
                                  params_.grad_vector(bias_[ul]), dx);
      if (l > 0)
        activation_backward<Space, Real>(space_, layer_activation(l - 1), rows_of(z_[ul - 1], rows),
                                         rows_of(a_[ul - 1], rows), dx, dx);
    }
  }

  View2<const Real, memory_space> outputs() const override {
    HPT_REQUIRE(has_forward_, "Mlp::outputs before forward()");
    return rows_of(z_.back(), last_rows_);
  }

 private:
  Activation layer_activation(int l) const {
    return l + 1 < num_layers() ? options_.activation : Activation::Identity;
  }
  static matrix rows_of(const matrix& m, int rows) {
    return Kokkos::subview(m, std::make_pair(0, rows), Kokkos::ALL);
  }

  MlpOptions options_;
  Space space_;
  store_type params_;
  std::vector<int> weight_, bias_;  // tensor indices per layer
  std::vector<matrix> z_, a_, delta_;
  int reserved_ = 0;
  bool has_forward_ = false;
  const Real* last_x_ = nullptr;
  int last_rows_ = 0;
};

extern template class Mlp<ExecSpace, real>;

}  // namespace hpt
