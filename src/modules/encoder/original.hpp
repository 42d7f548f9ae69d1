#pragma once
// Style `original` (docs/method.md#original-encoder): the prototype's features 0-25, unnormalised
// (parity mode).
#include "modules/encoder/encoder.hpp"

namespace hpt {

class Config;

class OriginalEncoder : public Encoder {
 public:
  explicit OriginalEncoder(const Config& config);
  OriginalEncoder(int loss_capacity, int other_capacity);

  std::string style() const override { return "original"; }
  void encode(const History& history, const View2<real>& features) override;
  FeatureUpdate feature_update() const override { return FeatureUpdate::LossOnly; }
  std::size_t bytes_per_encode(int runs) const override;
};

}  // namespace hpt
