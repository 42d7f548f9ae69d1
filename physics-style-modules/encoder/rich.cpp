#include "physics-style-modules/encoder/rich.hpp"

#include "core/config.hpp"
#include "kernels/encode_rich.hpp"
#include "kernels/feature_normalizer.hpp"

namespace hpt {

RichEncoder::RichEncoder(const Config& config)
    : RichEncoder(int(config.get_int("encoder.loss_history")),
                  int(config.get_int("encoder.grad_history")), config.get_real("encoder.clamp")) {}

RichEncoder::RichEncoder(int loss_capacity, int other_capacity, double clamp)
    : Encoder(loss_capacity, other_capacity, clamp) {}

void RichEncoder::prepare(int runs) {
  HPT_REQUIRE(runs >= 1, "RichEncoder::prepare: runs must be positive");
  normalizer_ = create_normalizer<real, MemSpace>(runs, kFeatures, clamp());
  raw_ = View2<real>("hpt::rich_raw_features", runs, kFeatures);
  if (resolve_layout<ExecSpace>(RunLayout::Auto, runs) == RunLayout::SeriesPerThread)
    workspace().fit(runs);
}

void RichEncoder::encode(const History& history, const View2<real>& features) {
  check_shapes(history, features);
  if (normalizer_.runs() != history.runs()) prepare(history.runs());
  const ExecSpace space;
  encode_rich(space, history, raw_, EncodeLaunch{}, &workspace());
  normalize(space, normalizer_, history, raw_, features);
}

std::size_t RichEncoder::bytes_per_encode(int runs) const {
  return encode_rich_bytes(std::size_t(runs), std::size_t(loss_capacity()),
                           std::size_t(other_capacity()), sizeof(real)) +
         normalize_bytes(std::size_t(runs), kFeatures, sizeof(real));
}

}  // namespace hpt
