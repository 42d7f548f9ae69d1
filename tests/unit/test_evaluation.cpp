// Held-out evaluation: the probe set is the probe part when the data set has one and the first
// validation rows otherwise. Checked with a zero model under MSE, whose loss on a row is
// proportional to the row's sum of squared targets: ratios of evaluations must equal the ratios of
// those sums computed here over the listed rows.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <random>
#include <vector>

#include "core/config.hpp"
#include "core/registry.hpp"
#include "physics-style-modules/dataset/dataset.hpp"
#include "physics-style-modules/model/register.hpp"
#include "train/evaluation.hpp"

namespace {

hpt::RawData regression_rows(std::int64_t rows, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal;
  hpt::RawData d;
  d.rows = rows;
  d.features = 3;
  d.outputs = 2;
  d.source = "test";
  d.task = hpt::Task::Regression;
  for (std::int64_t i = 0; i < rows * 3; ++i) d.x.push_back(normal(gen));
  // Targets grow with the row index, so different row sets have clearly different losses.
  for (std::int64_t r = 0; r < rows; ++r)
    for (int k = 0; k < 2; ++k) d.targets.push_back(normal(gen) + 0.01 * double(r));
  return d;
}

// Mean over the first `n` listed rows of the row's squared targets.
double mean_square(const hpt::RawData& raw, const std::vector<std::int64_t>& rows, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 2; ++k) s += std::pow(raw.targets[std::size_t(rows[i]) * 2 + k], 2);
  return s / double(n);
}

std::unique_ptr<hpt::Model> zero_mse_model() {
  hpt::OptionSchema s;
  hpt::declare_model_options(s);
  s.add_int("run.seed", 1, "seed");
  hpt::Registry<hpt::Model> reg("model");
  hpt::register_model_styles(reg);
  hpt::Config c(s);
  c.set("model.layers", "3,2", "test");
  c.set("model.loss", "mse", "test");
  auto m = reg.create("mlp", c);
  m->initialize(1);
  Kokkos::deep_copy(m->parameters().values(), hpt::real(0));
  return m;
}

}  // namespace

TEST(Evaluation, ProbeSetIsTheProbePartOrTheFirstValidationRows) {
  const auto raw = regression_rows(3000, 2);
  auto model = zero_mse_model();
  hpt::DatasetOptions o;
  o.val_fraction = 0.2;
  o.standardize = false;
  o.seed = 3;
  hpt::Dataset plain("test", raw, o);
  o.probe_fraction = 0.4;  // 1200 rows: more than one evaluation chunk
  hpt::Dataset split("test", raw, o);
  model->reserve_batch(hpt::train::evaluation_rows_reserved(split));
  const hpt::Communicator world = hpt::Communicator::world();  // one process: every row
  EXPECT_EQ(hpt::train::evaluation_rows_reserved(split), hpt::train::kEvaluationChunk);

  const double val = hpt::train::evaluate_validation_rows(*model, split, world).loss;
  const double val_ref = mean_square(raw, split.val_rows(), split.val_rows().size());
  for (std::int64_t rows : {100, 1100, 5000}) {
    const std::size_t n = std::size_t(std::min<std::int64_t>(rows, split.probe_size()));
    const double probe = hpt::train::evaluate_probe_rows(*model, split, world, rows).loss;
    EXPECT_NEAR(probe / val, mean_square(raw, split.probe_rows(), n) / val_ref, 1e-5)
        << rows << " probe rows";
  }
  // Without a probe part: the first validation rows, exactly the validation evaluation of as many.
  for (std::int64_t rows : {100, 600}) {
    const double probe = hpt::train::evaluate_probe_rows(*model, plain, world, rows).loss;
    EXPECT_EQ(probe, hpt::train::evaluate_validation_rows(*model, plain, world, rows).loss);
    const std::size_t n = std::size_t(std::min<std::int64_t>(rows, plain.val_size()));
    EXPECT_NEAR(probe / val, mean_square(raw, plain.val_rows(), n) / val_ref, 1e-5);
  }
}
