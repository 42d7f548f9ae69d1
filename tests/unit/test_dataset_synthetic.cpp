// Generated data sets (docs/method.md#training-problems): class balance, the labelling rule,
// determinism by seed, option parsing and the registry factories of the generated styles.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "core/config.hpp"
#include "core/registry.hpp"
#include "physics-style-modules/dataset/register.hpp"
#include "physics-style-modules/dataset/synthetic.hpp"

namespace {

std::map<int, long> class_counts(const hpt::RawData& d) {
  std::map<int, long> counts;
  for (int label : d.labels) ++counts[label];
  return counts;
}

bool same_rows(const hpt::RawData& a, const hpt::RawData& b) {
  return a.x == b.x && a.labels == b.labels && a.targets == b.targets;
}

}  // namespace

TEST(DatasetSynthetic, XorIsBalancedAndLabelledByQuadrant) {
  for (long n : {4L, 1001L, 2002L}) {
    const auto d = hpt::make_xor(n, 0.0, 7);
    ASSERT_EQ(d.rows, n);
    ASSERT_EQ(d.features, 2);
    ASSERT_EQ(d.outputs, 2);
    const auto counts = class_counts(d);
    EXPECT_LE(std::labs(counts.at(0) - counts.at(1)), 1) << "n = " << n;
    // Without noise every point lies in its quadrant: label 1 exactly when the signs differ.
    for (long i = 0; i < n; ++i) {
      const double x = d.x[2 * i], y = d.x[2 * i + 1];
      ASSERT_NE(x, 0.0);
      ASSERT_LE(std::fabs(x), 1.0);
      ASSERT_LE(std::fabs(y), 1.0);
      EXPECT_EQ(d.labels[i], ((x > 0) != (y > 0)) ? 1 : 0) << "row " << i;
    }
  }
  // With noise most points stay in their quadrant, some cross an axis.
  const auto noisy = hpt::make_xor(4000, 0.2, 7);
  long consistent = 0;
  for (long i = 0; i < noisy.rows; ++i)
    consistent += noisy.labels[i] == (((noisy.x[2 * i] > 0) != (noisy.x[2 * i + 1] > 0)) ? 1 : 0);
  EXPECT_GT(consistent, 0.8 * noisy.rows);
  EXPECT_LT(consistent, noisy.rows);
}

TEST(DatasetSynthetic, SpiralsAreBalancedInsideTheUnitDisc) {
  const int classes = 5;
  const long n = 1003;
  const auto d = hpt::make_spirals(n, classes, 0.3, 11);
  ASSERT_EQ(d.outputs, classes);
  const auto counts = class_counts(d);
  ASSERT_EQ(int(counts.size()), classes);
  for (const auto& kv : counts) EXPECT_LE(std::labs(kv.second - n / classes), 1);
  // Angle noise never changes the radius: every point within the unit disc and away from 0.
  for (long i = 0; i < n; ++i) {
    const double r = std::hypot(d.x[2 * i], d.x[2 * i + 1]);
    EXPECT_GT(r, 0.0);
    EXPECT_LT(r, 1.0);
  }
  // Without noise, arm c at radius t has angle 2 pi c / K + 4 t (mod 2 pi).
  const auto clean = hpt::make_spirals(n, classes, 0.0, 11);
  for (long i = 0; i < n; ++i) {
    const double x = clean.x[2 * i], y = clean.x[2 * i + 1], t = std::hypot(x, y);
    const double want = 2 * std::acos(-1.0) * clean.labels[i] / classes + 4 * t;
    EXPECT_NEAR(std::cos(want) * t, x, 1e-12);
    EXPECT_NEAR(std::sin(want) * t, y, 1e-12);
  }
}

TEST(DatasetSynthetic, SameSeedSameRowsOtherSeedOtherRows) {
  EXPECT_TRUE(same_rows(hpt::make_xor(500, 0.1, 3), hpt::make_xor(500, 0.1, 3)));
  EXPECT_FALSE(same_rows(hpt::make_xor(500, 0.1, 3), hpt::make_xor(500, 0.1, 4)));
  EXPECT_TRUE(same_rows(hpt::make_spirals(500, 3, 0.2, 3), hpt::make_spirals(500, 3, 0.2, 3)));
  EXPECT_FALSE(same_rows(hpt::make_spirals(500, 3, 0.2, 3), hpt::make_spirals(500, 3, 0.2, 4)));
  const std::vector<int> widths{5, 17, 3};
  for (auto task : {hpt::Task::Classification, hpt::Task::Regression}) {
    const auto a = hpt::make_teacher(200, widths, task, 9),
               b = hpt::make_teacher(200, widths, task, 9);
    const auto c = hpt::make_teacher(200, widths, task, 10);
    EXPECT_TRUE(same_rows(a, b));
    EXPECT_FALSE(same_rows(a, c));
  }
}

TEST(DatasetSynthetic, TeacherInputsAreStandardNormal) {
  const auto d = hpt::make_teacher(4000, {8, 16, 4}, hpt::Task::Classification, 2);
  double sum = 0, sq = 0;
  for (double v : d.x) sum += v, sq += v * v;
  const double mean = sum / d.x.size(), var = sq / d.x.size() - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.03);  // 32000 draws: std of the mean 0.0056
  EXPECT_NEAR(var, 1.0, 0.05);
  // A random teacher uses more than one class.
  EXPECT_GE(class_counts(d).size(), 3u);
}

TEST(DatasetSynthetic, TeacherLayersParse) {
  EXPECT_EQ(hpt::parse_teacher_layers("256,1024,1024,10"), (std::vector<int>{256, 1024, 1024, 10}));
  EXPECT_EQ(hpt::parse_teacher_layers(" 4, 8 ,2"), (std::vector<int>{4, 8, 2}));
  for (const char* bad : {"", "10", "3,x", "3,0", "3,,4", "3,4,", "2.5,3", "3,99999999"}) {
    try {
      hpt::parse_teacher_layers(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const hpt::InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("dataset.teacher_layers"), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::string("'") + bad + "'"), std::string::npos) << msg;
    }
  }
}

namespace {

struct Deck {
  hpt::OptionSchema schema;
  std::unique_ptr<hpt::Config> config;
  hpt::Registry<hpt::Dataset> registry{"dataset"};
  Deck() {
    hpt::declare_dataset_options(schema);
    config = std::make_unique<hpt::Config>(schema);
    hpt::register_dataset_styles(registry);
  }
  Deck& set(const std::string& key, const std::string& value) {
    config->set(key, value, "test");
    return *this;
  }
  std::unique_ptr<hpt::Dataset> create() {
    return registry.create(config->get_string("dataset.style"), *config);
  }
};

std::string input_error(Deck& deck) {
  try {
    deck.create();
  } catch (const hpt::InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace

TEST(DatasetSynthetic, RegistryBuildsGeneratedStyles) {
  {
    Deck deck;
    deck.set("dataset.style", "xor").set("dataset.samples", "400");
    const auto ds = deck.create();
    EXPECT_EQ(ds->style(), "xor");
    EXPECT_EQ(ds->size(), 400);
    EXPECT_EQ(ds->val_size(), 80);
    EXPECT_EQ(ds->features(), 2);
    EXPECT_EQ(ds->outputs(), 2);
  }
  {
    Deck deck;
    deck.set("dataset.style", "spirals").set("dataset.classes", "4").set("dataset.samples", "300");
    const auto ds = deck.create();
    EXPECT_EQ(ds->outputs(), 4);
    EXPECT_EQ(ds->task(), hpt::Task::Classification);
  }
  {
    Deck deck;
    deck.set("dataset.style", "teacher").set("dataset.teacher_layers", "6,12,3");
    deck.set("dataset.task", "regression").set("dataset.samples", "100");
    const auto ds = deck.create();
    EXPECT_EQ(ds->task(), hpt::Task::Regression);
    EXPECT_EQ(ds->features(), 6);
    EXPECT_EQ(ds->outputs(), 3);
    EXPECT_EQ(ds->targets_train().extent(1), 3u);
    EXPECT_EQ(ds->labels_train().extent(0), 0u);
  }
}

TEST(DatasetSynthetic, RegistryRejectsBadCombinations) {
  {
    Deck deck;
    deck.set("dataset.style", "xor").set("dataset.task", "regression");
    const auto msg = input_error(deck);
    EXPECT_NE(msg.find("dataset.task = 'regression'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("xor"), std::string::npos) << msg;
  }
  {
    Deck deck;
    deck.set("dataset.style", "spirals").set("dataset.classes", "10").set("dataset.samples", "5");
    const auto msg = input_error(deck);
    EXPECT_NE(msg.find("dataset.samples = 5"), std::string::npos) << msg;
  }
  {
    Deck deck;
    deck.set("dataset.style", "teacher").set("dataset.teacher_layers", "4,1");
    const auto msg = input_error(deck);
    EXPECT_NE(msg.find("dataset.teacher_layers"), std::string::npos) << msg;
  }
  {
    Deck deck;
    EXPECT_THROW(deck.registry.create("moons", *deck.config), hpt::InputError);
  }
  {
    // File styles without a loader are a programming error, not the user's.
    Deck deck;
    deck.set("dataset.style", "hdf5").set("dataset.path", "/proc/self/status");
    EXPECT_THROW(deck.create(), hpt::InternalError);
  }
}
