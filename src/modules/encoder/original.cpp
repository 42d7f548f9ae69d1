#include "modules/encoder/original.hpp"

#include "core/config.hpp"
#include "kernels/encode_original.hpp"

namespace hpt {

OriginalEncoder::OriginalEncoder(const Config& config)
    : OriginalEncoder(int(config.get_int("encoder.loss_history")),
                      int(config.get_int("encoder.grad_history"))) {}

OriginalEncoder::OriginalEncoder(int loss_capacity, int other_capacity)
    : Encoder(loss_capacity, other_capacity, 1.0) {}  // no normaliser, so no clamp

void OriginalEncoder::encode(const History& history, const View2<real>& features) {
  check_shapes(history, features);
  encode_original(ExecSpace(), history, features);
}

std::size_t OriginalEncoder::bytes_per_encode(int runs) const {
  return encode_original_bytes(std::size_t(runs), std::size_t(loss_capacity()),
                               std::size_t(other_capacity()), sizeof(real));
}

}  // namespace hpt
