#pragma once
// Style `rich` (docs/method.md#rich-encoder): the 64 features of rich_features.hpp through the
// running z-score normaliser (Welford, clamped, frozen during Predict).
#include "physics-style-modules/encoder/encoder.hpp"

namespace hpt {

class Config;

class RichEncoder : public Encoder {
 public:
  explicit RichEncoder(const Config& config);
  RichEncoder(int loss_capacity, int other_capacity, double clamp);

  std::string style() const override { return "rich"; }
  // Raw features, then normalisation (which updates the statistics unless the run is in Predict).
  void encode(const History& history, const View2<real>& features) override;
  FeatureUpdate feature_update() const override { return FeatureUpdate::Rich; }
  std::size_t bytes_per_encode(int runs) const override;

  Normalizer* normalizer() override { return &normalizer_; }
  const Normalizer* normalizer() const override { return &normalizer_; }
  // Allocates the normaliser (fresh statistics) and scratch for `runs` runs; encode() does it when
  // the number of runs changes, so call it before a time-critical loop or after loading statistics.
  void prepare(int runs) override;
  // The unnormalised features of the latest encode (runs x kFeatures).
  View2<real> raw_features() const { return raw_; }

 private:
  Normalizer normalizer_;
  View2<real> raw_;
};

}  // namespace hpt
