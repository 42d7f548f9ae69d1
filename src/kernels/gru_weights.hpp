#pragma once
// Weights of E independent GRU cells (docs/method.md#gru-cell), stored per member in the
// PyTorch/cuDNN export layout: member m's w_ih(m, :, :) is nn.GRUCell's weight_ih (3H x I), w_hh(m,
// :, :) its weight_hh (3H x H), b_ih(m, :) and b_hh(m, :) its bias_ih and bias_hh; rows [0,H) are
// the reset gate r, [H,2H) the update gate z, [2H,3H) the candidate n.
#include <Kokkos_Core.hpp>
#include <string>

#include "core/types.hpp"

namespace hpt {

// The two GRU conventions (docs/method.md#gru-cell): where the reset gate acts on the candidate,
// and which way the update gate z blends. Both share r = sigmoid(W_r x + b_ir + U_r h + b_hr) and z
// = sigmoid(W_z x + b_iz + U_z h + b_hz).
enum class GruReset : int {
  // PyTorch's nn.GRUCell / cuDNN exactly (default):
  //   n = tanh(W_n x + b_in + r * (U_n h + b_hn)),  h' = (1 - z) * n + z * h
  After = 0,
  // The prototype (parity mode):
  //   n = tanh(W_n x + U_n (r * h) + b_in + b_hn),  h' = (1 - z) * h + z * n
  Before = 1
};

// Gate blocks inside the 3H rows of every weight matrix and bias.
enum GruGate : int { kGateReset = 0, kGateUpdate = 1, kGateCandidate = 2 };

template <class Real, class Mem = MemSpace>
struct GruWeights {
  View3<Real, Mem> w_ih;  // (E, 3H, I) input weights W
  View3<Real, Mem> w_hh;  // (E, 3H, H) recurrent weights U
  View2<Real, Mem> b_ih;  // (E, 3H)   input biases
  View2<Real, Mem> b_hh;  // (E, 3H)   recurrent biases

  GruWeights() = default;
  GruWeights(int members, int hidden, int input, const std::string& label = "gru")
      : w_ih(label + ".w_ih", members, 3 * hidden, input),
        w_hh(label + ".w_hh", members, 3 * hidden, hidden),
        b_ih(label + ".b_ih", members, 3 * hidden),
        b_hh(label + ".b_hh", members, 3 * hidden) {}

  KOKKOS_INLINE_FUNCTION int members() const { return static_cast<int>(w_ih.extent(0)); }
  KOKKOS_INLINE_FUNCTION int hidden() const { return static_cast<int>(w_hh.extent(2)); }
  KOKKOS_INLINE_FUNCTION int input() const { return static_cast<int>(w_ih.extent(2)); }
};

}  // namespace hpt
