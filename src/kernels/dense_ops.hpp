#pragma once
// Dense layer for a batch: forward y = act(x W^T + b), backward dW, db, dx. x is [B][in], W is
// [out][in] (PyTorch nn.Linear layout), b is [out], z = x W^T + b the pre-activation [B][out].
// The GEMMs go through KokkosBlas::gemm; bias, activation and their derivatives are element-wise
// kernels. Every View must be LayoutRight and contiguous (row stride == extent(1)).
#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"

namespace hpt {

enum class Activation : int {
  Identity = 0,
  Relu = 1,
  Tanh = 2,
  Gelu = 3  // tanh approximation (Hendrycks & Gimpel; PyTorch approximate='tanh')
};

// "identity" | "relu" | "tanh" | "gelu"; throws InputError naming `key` otherwise.
inline Activation parse_activation(const std::string& text, const std::string& key) {
  if (text == "identity") return Activation::Identity;
  if (text == "relu") return Activation::Relu;
  if (text == "tanh") return Activation::Tanh;
  if (text == "gelu") return Activation::Gelu;
  throw InputError(key + " = '" + text +
                   "' is not an activation; expected relu, tanh, gelu or identity");
}

inline const char* activation_name(Activation a) {
  switch (a) {
    case Activation::Identity:
      return "identity";
    case Activation::Relu:
      return "relu";
    case Activation::Tanh:
      return "tanh";
    case Activation::Gelu:
      return "gelu";
  }
  return "?";
}

namespace detail {
// sqrt(2/pi) and the cubic coefficient of the tanh-approximated GELU.
constexpr double kGeluC = 0.7978845608028654;
constexpr double kGeluA = 0.044715;
}  // namespace detail

// act(z).
template <class Real>
KOKKOS_INLINE_FUNCTION Real activate(Activation a, Real z) {
  switch (a) {
    case Activation::Relu:
      return z > Real(0) ? z : Real(0);
    case Activation::Tanh:
      return math::tanh(z);
    case Activation::Gelu: {
      const Real u = Real(detail::kGeluC) * (z + Real(detail::kGeluA) * z * z * z);
      return Real(0.5) * z * (Real(1) + math::tanh(u));
    }
    default:
      return z;
  }
}

// d act / dz at pre-activation z with output y = act(z) (tanh uses y).
template <class Real>
KOKKOS_INLINE_FUNCTION Real activate_derivative(Activation a, Real z, Real y) {
  switch (a) {
    case Activation::Relu:
      return z > Real(0) ? Real(1) : Real(0);
    case Activation::Tanh:
      return Real(1) - y * y;
    case Activation::Gelu: {
      const Real z2 = z * z;
      const Real t = math::tanh(Real(detail::kGeluC) * (z + Real(detail::kGeluA) * z2 * z));
      const Real du = Real(detail::kGeluC) * (Real(1) + Real(3.0 * detail::kGeluA) * z2);
      return Real(0.5) * (Real(1) + t) + Real(0.5) * z * (Real(1) - t * t) * du;
    }
    default:
      return Real(1);
  }
}

namespace detail {

// KokkosBlas (3.4) runs gemm on the execution space of C's device type, so the operands are
// re-viewed with Device<Space, memory_space>: gemm then runs on Space (on its default instance).
template <class Space, class T>
using GemmView =
    Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::Device<Space, typename Space::memory_space>,
                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class Space, class T, class V>
GemmView<Space, T> gemm_view(const V& v) {
  HPT_REQUIRE(v.extent(0) <= 1 || v.stride(0) == v.extent(1),
              "dense_ops: a matrix operand is not contiguous");
  return GemmView<Space, T>(v.data(), v.extent(0), v.extent(1));
}

// C = alpha op(A) op(B) + beta C.
template <class Space, class Real, class VA, class VB, class VC>
void gemm(const Space& space, const char* ta, const char* tb, Real alpha, const VA& a, const VB& b,
          Real beta, const VC& c) {
  // 3.4's gemm takes no instance: it runs on Space's default instance, so callers pass the default
  // instance (or fence theirs) to keep the order with the element-wise kernels.
  (void)space;
  KokkosBlas::gemm(ta, tb, alpha, gemm_view<Space, const Real>(a), gemm_view<Space, const Real>(b),
                   beta, gemm_view<Space, Real>(c));
}

}  // namespace detail

// z = x W^T + b, y = act(z). y may be the same View as z (then y holds act(z) and z is lost, which
// is fine for Identity). Shapes: x [B][in], W [out][in], b [out], z and y [B][out].
template <class Space, class Real>
HPT_LAUNCHER void dense_forward(const Space& space,
                                View2<const Real, typename Space::memory_space> x,
                                View2<const Real, typename Space::memory_space> w,
                                View1<const Real, typename Space::memory_space> b, Activation act,
                                View2<Real, typename Space::memory_space> z,
                                View2<Real, typename Space::memory_space> y) {
  const std::int64_t batch = std::int64_t(x.extent(0));
  const std::int64_t out = std::int64_t(w.extent(0));
  HPT_REQUIRE(x.extent(1) == w.extent(1) && b.extent(0) == w.extent(0),
              "dense_forward: x, W and b shapes do not agree");
  HPT_REQUIRE(std::int64_t(z.extent(0)) == batch && std::int64_t(z.extent(1)) == out &&
                  y.extent(0) == z.extent(0) && y.extent(1) == z.extent(1),
              "dense_forward: z or y has the wrong shape");
  if (batch == 0) return;
  detail::gemm(space, "N", "T", Real(1), x, w, Real(0), z);
  Kokkos::parallel_for(
      "hpt::dense_bias_activation", Kokkos::RangePolicy<Space>(space, 0, batch * out),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const std::int64_t i = k / out, j = k % out;
        const Real zij = z(i, j) + b(j);
        z(i, j) = zij;
        y(i, j) = activate(act, zij);
      });
}

// dz = dy * act'(z) element-wise; dz may be the same View as dy (in place).
template <class Space, class Real>
HPT_LAUNCHER void activation_backward(const Space& space, Activation act,
                                      View2<const Real, typename Space::memory_space> z,
                                      View2<const Real, typename Space::memory_space> y,
                                      View2<const Real, typename Space::memory_space> dy,
                                      View2<Real, typename Space::memory_space> dz) {
  const std::int64_t rows = std::int64_t(z.extent(0)), cols = std::int64_t(z.extent(1));
  HPT_REQUIRE(dy.extent(0) == z.extent(0) && dy.extent(1) == z.extent(1) &&
                  dz.extent(0) == z.extent(0) && dz.extent(1) == z.extent(1),
              "activation_backward: shapes do not agree");
  if (act == Activation::Identity && dz.data() == dy.data()) return;
  Kokkos::parallel_for(
      "hpt::activation_backward", Kokkos::RangePolicy<Space>(space, 0, rows * cols),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const std::int64_t i = k / cols, j = k % cols;
        dz(i, j) = dy(i, j) * activate_derivative(act, z(i, j), y(i, j));
      });
}

// From dz = dL/dz [B][out]: dW = dz^T x [out][in], db = sum over the batch of dz [out], and, unless
// dx is an empty View (first layer), dx = dz W [B][in]. Overwrites dW, db and dx.
template <class Space, class Real>
HPT_LAUNCHER void dense_backward(const Space& space,
                                 View2<const Real, typename Space::memory_space> x,
                                 View2<const Real, typename Space::memory_space> w,
                                 View2<const Real, typename Space::memory_space> dz,
                                 View2<Real, typename Space::memory_space> dw,
                                 View1<Real, typename Space::memory_space> db,
                                 View2<Real, typename Space::memory_space> dx) {
  const int batch = int(x.extent(0));
  const int out = int(w.extent(0));
  HPT_REQUIRE(dz.extent(0) == x.extent(0) && dz.extent(1) == w.extent(0) &&
                  dw.extent(0) == w.extent(0) && dw.extent(1) == w.extent(1) &&
                  db.extent(0) == w.extent(0),
              "dense_backward: shapes do not agree");
  if (batch == 0) {
    Kokkos::deep_copy(space, dw, Real(0));
    Kokkos::deep_copy(space, db, Real(0));
    return;
  }
  detail::gemm(space, "T", "N", Real(1), dz, x, Real(0), dw);
  // One team per output unit, the batch reduced inside the team.
  using team_policy = Kokkos::TeamPolicy<Space>;
  using member_type = typename team_policy::member_type;
  Kokkos::parallel_for(
      "hpt::dense_bias_grad", team_policy(space, out, Kokkos::AUTO),
      KOKKOS_LAMBDA(const member_type& team) {
        const int j = team.league_rank();
        Real sum = Real(0);
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, batch), [&](const int i, Real& acc) { acc += dz(i, j); },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { db(j) = sum; });
      });
  if (dx.extent(0) > 0) {
    HPT_REQUIRE(dx.extent(0) == x.extent(0) && dx.extent(1) == x.extent(1),
                "dense_backward: dx has the wrong shape");
    detail::gemm(space, "N", "N", Real(1), dz, w, Real(0), dx);
  }
}

}  // namespace hpt
