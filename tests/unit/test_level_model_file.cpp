// Level model files: what save_level_model writes, load_level_model reads back exactly; every way
// such a file can be wrong (another version, another feature list, a weight vector of another
// shape, a NaN, an edited weight, a truncated file, another kind of hpt file, no file) is one
// InputError naming the option, the file and what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "io/hdf5_file.hpp"
#include "io/hdf5_format.hpp"
#include "io/level_model_file.hpp"
#include "test_hdf5_support.hpp"

namespace {

using hpt::forecast::kLevelFeatures;
using hpt::forecast::LevelModel;

LevelModel sample_model() {
  LevelModel m;
  for (int j = 0; j < kLevelFeatures; ++j) {
    m.median.push_back(0.1 * j - 0.7);
    m.q05.push_back(-0.3 - 1e-3 * j);
    m.q95.push_back(0.4 + 1.0 / (j + 3));
  }
  m.corpus = "curves.h5";
  m.runs = 7;
  m.samples = 1234;
  m.horizons = {10, 50, 200};
  return m;
}

// Saves the sample model to `path`, then applies `edit` to its /level_model group.
void write_edited(const std::string& path, const std::function<void(hpt::io::H5Group&)>& edit) {
  hpt::io::save_level_model(sample_model(), path, "[run]\nmode = pretrain\n");
  hpt::io::H5File f = hpt::io::H5File::open_readwrite(path);
  hpt::io::H5Group g = f.root().open_group("level_model");
  edit(g);
}

void write_weights(hpt::io::H5Group& g, const std::string& name, std::vector<double> w) {
  g.write_dataset(name, hpt::io::H5Element::Float64, w.data(), {w.size()});
}

}  // namespace

TEST(LevelModelFile, RoundTripIsExact) {
  hpt::test::TempDir dir;
  const std::string path = dir.file("model.h5");
  const LevelModel m = sample_model();
  hpt::io::save_level_model(m, path, "");
  const LevelModel back = hpt::io::load_level_model(path, "forecast.pretrained");
  EXPECT_EQ(back.median, m.median);
  EXPECT_EQ(back.q05, m.q05);
  EXPECT_EQ(back.q95, m.q95);
  EXPECT_EQ(back.corpus, m.corpus);
  EXPECT_EQ(back.runs, m.runs);
  EXPECT_EQ(back.samples, m.samples);
  EXPECT_EQ(back.horizons, m.horizons);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.h5"});  // no temporary left
}

TEST(LevelModelFile, AFinalLevelModelKeepsItsTargetAndIsRefusedWhereAHorizonModelIsExpected) {
  hpt::test::TempDir dir;
  LevelModel m = sample_model();
  m.target = LevelModel::Target::kEnd;
  m.horizons.clear();
  m.end_from = 0.1, m.end_to = 0.5;
  hpt::io::save_level_model(m, dir.file("end.h5"), "");
  const LevelModel back = hpt::io::load_level_model(dir.file("end.h5"), "forecast.final_model",
                                                    LevelModel::Target::kEnd);
  EXPECT_EQ(back.target, LevelModel::Target::kEnd);
  EXPECT_EQ(back.end_from, 0.1);
  EXPECT_EQ(back.end_to, 0.5);
  EXPECT_EQ(back.median, m.median);
  const auto refused = [&](const std::string& file, const std::string& key,
                           LevelModel::Target expected, const std::string& says) {
    try {
      hpt::io::load_level_model(dir.file(file), key, expected);
      ADD_FAILURE() << file << " was accepted as " << key;
    } catch (const hpt::InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(key + " = '" + dir.file(file) + "'"), std::string::npos) << what;
      EXPECT_NE(what.find(says), std::string::npos) << what;
    }
  };
  refused("end.h5", "forecast.pretrained", LevelModel::Target::kHorizons,
          "holds a final-level model (pretrain.target = end); expected a model of the level at "
          "horizons ahead");
  hpt::io::save_level_model(sample_model(), dir.file("horizons.h5"), "");
  refused("horizons.h5", "forecast.final_model", LevelModel::Target::kEnd,
          "expected a final-level model");
}

TEST(LevelModelFile, EveryWrongFileIsOneInputErrorNamingIt) {
  hpt::test::TempDir dir;
  struct Case {
    std::string name, expect;
    std::function<void(hpt::io::H5Group&)> edit;
  };
  const std::vector<Case> cases = {
      {"version.h5", "version 2; this hpt reads version 1",
       [](hpt::io::H5Group& g) { g.write_int_attribute("version", 2); }},
      {"features.h5", "was made for the features 'bias,x'",
       [](hpt::io::H5Group& g) { g.write_string_attribute("features", "bias,x"); }},
      {"shape.h5", "median",
       [](hpt::io::H5Group& g) {
         write_weights(g, "median", std::vector<double>(std::size_t(kLevelFeatures - 1), 0.5));
       }},
      {"nan.h5", "weight 3 of /level_model/q05 is NaN",
       [](hpt::io::H5Group& g) {
         std::vector<double> w = sample_model().q05;
         w[3] = std::numeric_limits<double>::quiet_NaN();
         write_weights(g, "q05", w);
       }},
      {"edited.h5", "checksum does not match",
       [](hpt::io::H5Group& g) {
         std::vector<double> w = sample_model().q95;
         w[0] += 1e-9;
         write_weights(g, "q95", w);
       }},
      {"no_q95.h5", "q95", [](hpt::io::H5Group& g) { g.remove("q95"); }},
      {"no_checksum.h5", "checksum",
       [](hpt::io::H5Group& g) { g.write_string_attribute("checksum", "x"); }},
  };
  for (const Case& c : cases) {
    const std::string path = dir.file(c.name);
    write_edited(path, c.edit);
    hpt::test::expect_input_error([&] { hpt::io::load_level_model(path, "forecast.pretrained"); },
                                  {"forecast.pretrained = '" + path + "'", c.expect});
  }
  // Truncated, another kind of hpt file, not HDF5, missing.
  const std::string truncated = dir.file("truncated.h5");
  hpt::io::save_level_model(sample_model(), truncated, "");
  std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) / 2);
  hpt::test::expect_input_error(
      [&] { hpt::io::load_level_model(truncated, "forecast.pretrained"); },
      {"forecast.pretrained = '" + truncated + "'"});
  const std::string other = dir.file("other.h5");
  {
    hpt::io::H5File f = hpt::io::H5File::create(other);
    hpt::io::write_hpt_header(f, hpt::io::HptFileKind::Forecast, "");
  }
  hpt::test::expect_input_error([&] { hpt::io::load_level_model(other, "forecast.pretrained"); },
                                {"forecast.pretrained = '" + other + "'", "forecast"});
  const std::string text = dir.file("text.h5");
  std::ofstream(text) << "not hdf5\n";
  hpt::test::expect_input_error([&] { hpt::io::load_level_model(text, "forecast.pretrained"); },
                                {"forecast.pretrained = '" + text + "'"});
  const std::string missing = dir.file("missing.h5");
  hpt::test::expect_input_error([&] { hpt::io::load_level_model(missing, "forecast.pretrained"); },
                                {"forecast.pretrained = '" + missing + "'"});
}
