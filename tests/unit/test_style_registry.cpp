// The style registries of every family: the deck's choices of <family>.style are exactly the
// registered names (written once), an unknown name is refused naming the key that selects it, and
// the styles' memory reports against sizes computed here from the deck.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"
#include "physics-style-modules/dataset/register.hpp"
#include "physics-style-modules/dynamics/register.hpp"
#include "physics-style-modules/encoder/register.hpp"
#include "physics-style-modules/model/register.hpp"
#include "physics-style-modules/optimizer/register.hpp"
#include "physics-style-modules/update/register.hpp"
#include "train/hybrid_controllers.hpp"
#include "train/hybrid_options.hpp"
#include "train/training_options.hpp"

namespace {

// Every option the styles and the training loop declare (what the memory reports read).
hpt::OptionSchema full_schema() {
  hpt::OptionSchema s;
  hpt::declare_dataset_options(s);
  hpt::declare_model_options(s);
  hpt::declare_optimizer_options(s);
  hpt::declare_encoder_options(s);
  hpt::declare_dynamics_options(s);
  hpt::declare_update_options(s);
  hpt::train::declare_training_options(s);
  hpt::train::declare_hybrid_options(s);
  return s;
}

template <class Base>
std::vector<std::string> registered(void (*register_styles)(hpt::Registry<Base>&),
                                    const std::string& family) {
  hpt::Registry<Base> r(family);
  register_styles(r);
  return r.names();
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> choices(const hpt::OptionSchema& s, const std::string& key) {
  const hpt::OptionSpec* spec = s.find(key);
  EXPECT_NE(spec, nullptr) << key;
  return spec ? sorted(spec->choices) : std::vector<std::string>{};
}

void register_datasets(hpt::Registry<hpt::Dataset>& r) {
  hpt::register_dataset_styles(r);
}

TEST(StyleRegistry, DeckChoicesAreTheRegisteredNames) {
  const hpt::OptionSchema s = full_schema();
  EXPECT_EQ(choices(s, "dataset.style"), sorted(registered(register_datasets, "dataset")));
  EXPECT_EQ(choices(s, "model.style"), sorted(registered(hpt::register_model_styles, "model")));
  EXPECT_EQ(choices(s, "optimizer.style"),
            sorted(registered(hpt::register_optimizer_styles, "optimizer")));
  EXPECT_EQ(choices(s, "encoder.style"),
            sorted(registered(hpt::register_encoder_styles, "encoder")));
  EXPECT_EQ(choices(s, "dynamics.style"),
            sorted(registered(hpt::register_dynamics_styles, "dynamics")));
  EXPECT_EQ(choices(s, "update.style"), sorted(registered(hpt::register_update_styles, "update")));
  hpt::train::ControllerRegistry controllers("hybrid controller", "hybrid.controller");
  hpt::train::register_hybrid_controllers(controllers);
  EXPECT_EQ(choices(s, "hybrid.controller"), sorted(controllers.names()));
  // The prototype's styles are ordinary entries of their families.
  EXPECT_EQ(choices(s, "encoder.style"), (std::vector<std::string>{"prototype", "rich"}));
  EXPECT_EQ(choices(s, "hybrid.controller"), (std::vector<std::string>{"hpt", "prototype"}));
}

TEST(StyleRegistry, UnknownNameNamesTheKeyThatSelectsIt) {
  const hpt::OptionSchema s = full_schema();
  hpt::Config c(s);
  hpt::train::ControllerRegistry controllers("hybrid controller", "hybrid.controller");
  hpt::train::register_hybrid_controllers(controllers);
  try {
    hpt::Registry<hpt::Dataset> datasets("dataset");
    hpt::register_dataset_styles(datasets);
    datasets.create("mnist", c);
    FAIL() << "no error";
  } catch (const hpt::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dataset.style = 'mnist'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("digits, hdf5, spirals, teacher, xor"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(controllers.key(), "hybrid.controller");
  // The prototype's RSSM is registered, and refused as a general forecaster with the reason.
  hpt::Registry<hpt::Dynamics> dynamics("dynamics");
  hpt::register_dynamics_styles(dynamics);
  try {
    dynamics.create("rssm_prototype", c);
    FAIL() << "no error";
  } catch (const hpt::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("hybrid.controller = prototype"), std::string::npos);
  }
}

TEST(StyleRegistry, StylesReportTheirMemory) {
  const hpt::OptionSchema s = full_schema();
  hpt::Config c(s);
  c.set("dataset.samples", "5000", "test");
  c.set("model.layers", "8,32,4", "test");
  c.set("train.batch_size", "2048", "test");
  c.set("dataset.teacher_layers", "8,16,4", "test");
  hpt::Registry<hpt::Dataset> datasets("dataset");
  hpt::register_dataset_styles(datasets, {},
                               [](const std::string&) { return std::pair<long, long>(300, 7); });
  const double row = 8 + sizeof(hpt::real);  // a value in double on the host, in real on the device
  EXPECT_DOUBLE_EQ(datasets.memory_need("xor", c).bytes, 5000 * (2 + 1) * row);
  EXPECT_DOUBLE_EQ(datasets.memory_need("spirals", c).bytes, 5000 * (2 + 1) * row);
  EXPECT_DOUBLE_EQ(datasets.memory_need("digits", c).bytes, 1797 * (64 + 1) * row);
  EXPECT_DOUBLE_EQ(datasets.memory_need("hdf5", c).bytes, 300 * (7 + 1) * row);
  // The teacher: its rows, its weights and its outputs in double.
  EXPECT_DOUBLE_EQ(datasets.memory_need("teacher", c).bytes,
                   5000 * (8 + 4) * row + (8 * 16 + 16 * 4) * 8 + 5000 * 4 * 8);
  EXPECT_NE(datasets.memory_need("teacher", c).keys.find("dataset.teacher_layers = 8,16,4"),
            std::string::npos);

  hpt::Registry<hpt::Model> models("model");
  hpt::register_model_styles(models);
  const hpt::MemoryNeed mlp = models.memory_need("mlp", c);
  const double params = 8 * 32 + 32 + 32 * 4 + 4;
  EXPECT_DOUBLE_EQ(mlp.parameters, params);
  EXPECT_DOUBLE_EQ(mlp.bytes, (5 * params + 3 * 2048.0 * (8 + 32 + 4)) * sizeof(hpt::real));
  EXPECT_EQ(models.memory_need("no such style", c).bytes, 0.0);
}

}  // namespace
