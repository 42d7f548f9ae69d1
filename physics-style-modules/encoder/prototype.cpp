#include "physics-style-modules/encoder/prototype.hpp"

#include "core/config.hpp"
#include "kernels/encode_prototype.hpp"

namespace hpt {

PrototypeEncoder::PrototypeEncoder(const Config& config)
    : PrototypeEncoder(int(config.get_int("encoder.loss_history")),
                       int(config.get_int("encoder.grad_history"))) {}

PrototypeEncoder::PrototypeEncoder(int loss_capacity, int other_capacity)
    : Encoder(loss_capacity, other_capacity, 1.0) {}  // no normaliser, so no clamp

void PrototypeEncoder::encode(const History& history, const View2<real>& features) {
  check_shapes(history, features);
  encode_prototype(ExecSpace(), history, features);
}

std::size_t PrototypeEncoder::bytes_per_encode(int runs) const {
  return encode_prototype_bytes(std::size_t(runs), std::size_t(loss_capacity()),
                                std::size_t(other_capacity()), sizeof(real));
}

}  // namespace hpt
