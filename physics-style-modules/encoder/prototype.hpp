#pragma once
// Style `prototype` (docs/method.md#prototype-encoder): the prototype's features 0-25, unnormalised
// (parity mode).
#include "physics-style-modules/encoder/encoder.hpp"

namespace hpt {

class Config;

class PrototypeEncoder : public Encoder {
 public:
  explicit PrototypeEncoder(const Config& config);
  PrototypeEncoder(int loss_capacity, int other_capacity);

  std::string style() const override { return "prototype"; }
  void encode(const History& history, const View2<real>& features) override;
  FeatureUpdate feature_update() const override { return FeatureUpdate::LossOnly; }
  std::size_t bytes_per_encode(int runs) const override;
};

}  // namespace hpt
