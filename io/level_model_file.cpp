#include "io/level_model_file.hpp"

#include <cmath>
#include <vector>

#include "core/checksum.hpp"
#include "core/error.hpp"
#include "io/atomic_file.hpp"
#include "io/declared_size.hpp"
#include "io/hdf5_format.hpp"

namespace hpt::io {

namespace {

using forecast::kLevelFeatures;
using forecast::LevelModel;

const char* const kWeightSets[] = {"median", "q05", "q95"};

std::string feature_list() {
  std::string s;
  for (int j = 0; j < kLevelFeatures; ++j)
    s += (j ? "," : "") + std::string(forecast::kLevelFeatureNames[j]);
  return s;
}

std::vector<double>& weights(LevelModel& m, int set) {
  return set == 0 ? m.median : set == 1 ? m.q05 : m.q95;
}

// FNV-1a over the three weight vectors, in their order.
std::uint64_t weights_checksum(const LevelModel& m) {
  std::uint64_t h = kChecksumStart;
  for (const auto* w : {&m.median, &m.q05, &m.q95})
    h = fnv1a(h, w->data(), w->size() * sizeof(double));
  return h;
}

LevelModel read_model(const std::string& path, const std::string& where) {
  const H5File file = open_hpt_file(path, HptFileKind::LevelModel);
  const H5Group group = file.root().open_group("level_model");
  const std::int64_t version = group.read_int_attribute("version");
  if (version != LevelModel::kVersion)
    throw InputError(where + " holds a level model of version " + std::to_string(version) +
                     "; this hpt reads version " + std::to_string(LevelModel::kVersion) +
                     " (pretrain it again with run.mode = pretrain)");
  const std::string features = group.read_string_attribute("features");
  if (features != feature_list())
    throw InputError(where + " was made for the features '" + features + "'; this hpt uses '" +
                     feature_list() + "' (pretrain it again with run.mode = pretrain)");
  LevelModel m;
  for (int set = 0; set < 3; ++set) {
    std::vector<double>& w = weights(m, set);
    w.resize(std::size_t(kLevelFeatures));
    group.read_dataset(kWeightSets[set], H5Element::Float64, w.data(),
                       {std::size_t(kLevelFeatures)});
    for (int j = 0; j < kLevelFeatures; ++j)
      if (!std::isfinite(w[std::size_t(j)]))
        throw InputError(where + ": weight " + std::to_string(j) + " of /level_model/" +
                         kWeightSets[set] + " is " +
                         (std::isnan(w[std::size_t(j)]) ? "NaN" : "infinite") +
                         "; expected finite weights");
  }
  if (std::uint64_t(group.read_int_attribute("checksum")) != weights_checksum(m))
    throw InputError(where +
                     ": its checksum does not match its weights (the file is damaged or "
                     "was edited)");
  m.corpus = group.read_string_attribute("corpus");
  m.runs = group.read_int_attribute("runs");
  m.samples = group.read_int_attribute("samples");
  const bool to_end =
      group.has_attribute("target") && group.read_string_attribute("target") == "end";
  if (to_end) {
    m.target = LevelModel::Target::kEnd;
    m.end_from = group.read_double_attribute("end_from");
    m.end_to = group.read_double_attribute("end_to");
  } else {
    m.horizons = group.read_vector_attribute<int>("horizons");
  }
  return m;
}

const char* target_words(LevelModel::Target t) {
  return t == LevelModel::Target::kEnd
             ? "a final-level model (pretrain.target = end)"
             : "a model of the level at horizons ahead (pretrain.target = horizons)";
}

}  // namespace

void save_level_model(const LevelModel& model, const std::string& path, const std::string& deck) {
  AtomicH5Writer writer(path);
  H5File& file = writer.file();
  write_hpt_header(file, HptFileKind::LevelModel, deck);
  H5Group group = file.root().create_group("level_model");
  group.write_int_attribute("version", LevelModel::kVersion);
  group.write_string_attribute("features", feature_list());
  LevelModel copy = model;
  for (int set = 0; set < 3; ++set)
    group.write_dataset(kWeightSets[set], H5Element::Float64, weights(copy, set).data(),
                        {std::size_t(kLevelFeatures)});
  group.write_string_attribute("corpus", model.corpus);
  group.write_int_attribute("runs", model.runs);
  group.write_int_attribute("samples", model.samples);
  if (model.target == LevelModel::Target::kEnd) {
    group.write_string_attribute("target", "end");
    group.write_double_attribute("end_from", model.end_from);
    group.write_double_attribute("end_to", model.end_to);
  } else {
    group.write_string_attribute("target", "horizons");
    group.write_vector_attribute("horizons", model.horizons);
  }
  group.write_int_attribute("checksum", std::int64_t(weights_checksum(model)));
  writer.commit();
}

LevelModel load_level_model(const std::string& path, const std::string& key,
                            LevelModel::Target expected) {
  const std::string where = key + " = '" + path + "'";
  return naming_file_when_too_large(where, [&] {
    try {
      LevelModel m = read_model(path, where);
      if (m.target != expected)
        throw InputError(where + " holds " + target_words(m.target) + "; expected " +
                         target_words(expected));
      return m;
    } catch (const InputError& e) {
      const std::string what = e.what();
      if (what.rfind(where, 0) == 0) throw;
      throw InputError(where + ": " + what);
    }
  });
}

}  // namespace hpt::io
