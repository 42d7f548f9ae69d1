// Dataset files: the gzip CSV reader (digits) and the /X, /y HDF5 reader, on files written here
// with zlib and the HDF5 C API, including every error case; the digits and hdf5 styles through the
// registry.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "core/config.hpp"
#include "core/registry.hpp"
#include "io/dataset_files.hpp"
#include "physics-style-modules/dataset/digits.hpp"
#include "physics-style-modules/dataset/register.hpp"

namespace fs = std::filesystem;

namespace {

class DatasetFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("hpt_test_dataset_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write_gz(const std::string& name, const std::string& text) const {
    const std::string p = path(name);
    gzFile f = gzopen(p.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    gzwrite(f, text.data(), unsigned(text.size()));
    gzclose(f);
    return p;
  }

  fs::path dir_;
};

// Writes one dataset of the given HDF5 file type (the memory type is the native one of T).
template <class T>
void write_h5(hid_t file, const char* name, hid_t file_type, hid_t mem_type,
              std::vector<hsize_t> dims, const std::vector<T>& data) {
  const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  const hid_t set = H5Dcreate2(file, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(set, 0);
  ASSERT_GE(H5Dwrite(set, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
  H5Dclose(set);
  H5Sclose(space);
}

struct Xy {
  std::vector<double> x;
  std::vector<hsize_t> x_dims{6, 3};
  std::vector<long long> labels{0, 2, 1, 2, 0, 1};
  std::vector<double> targets;  // used instead of labels when not empty
  std::vector<hsize_t> y_dims{6};
  hid_t x_type = H5T_IEEE_F32LE;
  bool write_x = true, write_y = true;
};

Xy sample_xy() {
  Xy d;
  for (int i = 0; i < 18; ++i) d.x.push_back(0.25 * i - 1.0);
  return d;
}

void write_xy(const std::string& p, const Xy& d) {
  const hid_t file = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  if (d.write_x) write_h5(file, "X", d.x_type, H5T_NATIVE_DOUBLE, d.x_dims, d.x);
  if (d.write_y) {
    if (d.targets.empty())
      write_h5(file, "y", H5T_STD_I32LE, H5T_NATIVE_LLONG, d.y_dims, d.labels);
    else
      write_h5(file, "y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, d.y_dims, d.targets);
  }
  H5Fclose(file);
}

// The message of the InputError thrown by f(), or a marker when none is thrown.
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const hpt::InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

#define EXPECT_MENTIONS(msg, text) \
  EXPECT_NE((msg).find(text), std::string::npos) << "'" << (msg) << "' lacks '" << (text) << "'"

}  // namespace

TEST_F(DatasetFiles, CsvGzReadsRowsAndLabels) {
  const auto p = write_gz("small.csv.gz", "0,1.5,16,3\r\n2,0,4.25,0\n\n7,8,9,1\n");
  const auto d = hpt::io::read_digits_csv_gz(p);
  EXPECT_EQ(d.rows, 3);
  EXPECT_EQ(d.features, 3);
  EXPECT_EQ(d.outputs, 4);  // largest label + 1
  EXPECT_EQ(d.x, (std::vector<double>{0, 1.5, 16, 2, 0, 4.25, 7, 8, 9}));
  EXPECT_EQ(d.labels, (std::vector<int>{3, 0, 1}));
  EXPECT_EQ(d.task, hpt::Task::Classification);
  EXPECT_EQ(d.source, p);
}

TEST_F(DatasetFiles, CsvGzLongLinesAreReadWhole) {
  std::string line;
  for (int i = 0; i < 3000; ++i) line += std::to_string(i % 17) + ",";
  line += "5\n";
  const auto d = hpt::io::read_digits_csv_gz(write_gz("wide.csv.gz", line + line));
  EXPECT_EQ(d.features, 3000);
  EXPECT_EQ(d.rows, 2);
  EXPECT_EQ(d.x[2999], double(2999 % 17));
}

TEST_F(DatasetFiles, CsvGzErrorsNameFileAndLine) {
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases{
      {"1,2,3\n4,x,6\n", "line 2 column 2: 'x' is not a number"},
      {"1,2,3\n4,5\n", "line 2 has 2 columns; expected 3"},
      {"1,2,-1\n", "line 1 has label -1"},
      {"1,2,0.5\n", "line 1 has label 0.5"},
      {"1,nan,3\n", "line 1 column 2 is not finite"},
      {"7\n", "line 1 has one column"},
      {"\n\n", "has no data lines"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto p = write_gz("bad" + std::to_string(i) + ".csv.gz", cases[i].text);
    const auto msg = input_error([&] { hpt::io::read_digits_csv_gz(p); });
    EXPECT_MENTIONS(msg, p);
    EXPECT_MENTIONS(msg, cases[i].expect);
  }
  const auto missing = path("missing.csv.gz");
  EXPECT_MENTIONS(input_error([&] { hpt::io::read_digits_csv_gz(missing); }), missing);
  // A truncated gzip stream.
  const auto good = write_gz("full.csv.gz", std::string(2000, '1') + ",2\n");
  fs::resize_file(good, fs::file_size(good) / 2);
  EXPECT_MENTIONS(input_error([&] { hpt::io::read_digits_csv_gz(good); }), good);
}

TEST_F(DatasetFiles, RealDigitsFileIfInstalled) {
  const std::string p = hpt::default_digits_path();
  if (!fs::exists(p)) GTEST_SKIP() << p << " not installed (run/setup)";
  auto d = hpt::io::read_digits_csv_gz(p);
  ASSERT_EQ(d.rows, 1797);
  ASSERT_EQ(d.features, 64);
  hpt::check_digits_layout(d);
  EXPECT_EQ(d.outputs, 10);
  std::vector<int> counts(10, 0);
  for (int l : d.labels) ++counts.at(std::size_t(l));
  for (int c : counts) EXPECT_GT(c, 170);
  for (double v : d.x) ASSERT_TRUE(v >= 0 && v <= 16 && v == std::floor(v));
}

TEST_F(DatasetFiles, DigitsPathDefaultsToDepsDir) {
  const char* old = std::getenv("HPT_DEPS_DIR");
  const std::string saved = old ? old : "";
  ::setenv("HPT_DEPS_DIR", dir_.c_str(), 1);
  EXPECT_EQ(hpt::default_digits_path(), (dir_ / "data/digits.csv.gz").string());
  const auto msg = input_error([] { hpt::resolve_digits_path(""); });
  EXPECT_MENTIONS(msg, (dir_ / "data/digits.csv.gz").string());
  EXPECT_MENTIONS(msg, "run run/setup");
  fs::create_directories(dir_ / "data");
  write_gz("data/digits.csv.gz", "1,2\n");
  EXPECT_EQ(hpt::resolve_digits_path(""), (dir_ / "data/digits.csv.gz").string());
  if (old)
    ::setenv("HPT_DEPS_DIR", saved.c_str(), 1);
  else
    ::unsetenv("HPT_DEPS_DIR");
  const auto msg2 = input_error([&] { hpt::resolve_digits_path(path("nope.csv.gz")); });
  EXPECT_MENTIONS(msg2, "dataset.path = '" + path("nope.csv.gz") + "'");
}

TEST_F(DatasetFiles, Hdf5ClassificationAndRegression) {
  const auto p = path("cls.h5");
  write_xy(p, sample_xy());
  const auto d = hpt::io::read_xy_hdf5(p);
  EXPECT_EQ(d.rows, 6);
  EXPECT_EQ(d.features, 3);
  EXPECT_EQ(d.task, hpt::Task::Classification);
  EXPECT_EQ(d.outputs, 3);
  EXPECT_EQ(d.labels, (std::vector<int>{0, 2, 1, 2, 0, 1}));
  EXPECT_EQ(d.x, sample_xy().x);  // exact in float32 too

  auto xy = sample_xy();
  xy.x_type = H5T_IEEE_F64LE;
  xy.targets = {0.5, -1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11.125};
  xy.y_dims = {6, 2};
  const auto q = path("reg.h5");
  write_xy(q, xy);
  const auto r = hpt::io::read_xy_hdf5(q);
  EXPECT_EQ(r.task, hpt::Task::Regression);
  EXPECT_EQ(r.outputs, 2);
  EXPECT_EQ(r.targets, xy.targets);
  EXPECT_TRUE(r.labels.empty());

  xy.targets.resize(6);
  xy.y_dims = {6};
  write_xy(q, xy);
  EXPECT_EQ(hpt::io::read_xy_hdf5(q).outputs, 1);
}

TEST_F(DatasetFiles, Hdf5ErrorsNameFileAndDataset) {
  struct Case {
    std::string name, expect1, expect2;
    Xy xy;
  };
  std::vector<Case> cases;
  auto add = [&](const std::string& name, const std::string& e1, const std::string& e2, auto edit) {
    Xy xy = sample_xy();
    edit(xy);
    cases.push_back({name, e1, e2, xy});
  };
  add("no_y.h5", "has no dataset /y", "expected /X", [](Xy& d) { d.write_y = false; });
  add("no_x.h5", "has no dataset /X", "expected /X", [](Xy& d) { d.write_x = false; });
  add("rank3.h5", "dataset /X has rank 3 (1 x 6 x 3)", "expected rank 2", [](Xy& d) {
    d.x_dims = {1, 6, 3};
  });
  add("mismatch.h5", "/X has 6 rows, /y has 5", "disagree on N", [](Xy& d) {
    d.labels.pop_back();
    d.y_dims = {5};
  });
  add("negative.h5", "dataset /y row 3 has label -1", "expected class labels >= 0",
      [](Xy& d) { d.labels[3] = -1; });
  add("nan.h5", "dataset /X row 4 column 1 is NaN", "finite",
      [](Xy& d) { d.x[13] = std::numeric_limits<double>::quiet_NaN(); });
  add("inf_y.h5", "dataset /y row 2 column 0 is infinite", "finite",
      [](Xy& d) { d.targets = {1, 2, std::numeric_limits<double>::infinity(), 4, 5, 6}; });
  add("int_y_rank2.h5", "dataset /y has rank 2 (3 x 2)", "rank 1 (N integer labels)", [](Xy& d) {
    d.y_dims = {3, 2};
  });
  for (const auto& c : cases) {
    const auto p = path(c.name);
    write_xy(p, c.xy);
    const auto msg = input_error([&] { hpt::io::read_xy_hdf5(p); });
    EXPECT_MENTIONS(msg, p);
    EXPECT_MENTIONS(msg, c.expect1);
    EXPECT_MENTIONS(msg, c.expect2);
  }
  const auto missing = path("missing.h5");
  EXPECT_MENTIONS(input_error([&] { hpt::io::read_xy_hdf5(missing); }),
                  missing + ": file not found");
  const auto text = path("text.h5");
  std::ofstream(text) << "not hdf5\n";
  EXPECT_MENTIONS(input_error([&] { hpt::io::read_xy_hdf5(text); }), text + ": not an HDF5 file");
  const auto truncated = path("truncated.h5");
  auto big = sample_xy();
  big.x.assign(30000, 1.0);
  big.x_dims = {10000, 3};
  big.labels.assign(10000, 1);
  big.y_dims = {10000};
  write_xy(truncated, big);
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  EXPECT_MENTIONS(input_error([&] { hpt::io::read_xy_hdf5(truncated); }), truncated);
}

// Writes /X and /y as chunked datasets of the given shapes with no data written: the file is small
// whatever the shapes declare.
void write_declared_shapes(const std::string& p, std::vector<hsize_t> x_dims, hsize_t y_rows) {
  const hid_t file = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  auto declare = [&](const char* name, std::vector<hsize_t> dims, hid_t type) {
    const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
    const hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
    std::vector<hsize_t> chunk(dims.size(), 1);
    H5Pset_chunk(plist, int(chunk.size()), chunk.data());
    const hid_t set = H5Dcreate2(file, name, type, space, H5P_DEFAULT, plist, H5P_DEFAULT);
    EXPECT_GE(set, 0);
    H5Dclose(set), H5Pclose(plist), H5Sclose(space);
  };
  declare("/X", x_dims, H5T_IEEE_F32LE);
  declare("/y", {y_rows}, H5T_STD_I64LE);
  H5Fclose(file);
}

TEST_F(DatasetFiles, Hdf5DeclaredShapesBeyondTheMachineNameTheFile) {
  // More columns than an int holds, or more values than a 64-bit count: refused before allocating.
  const auto wide = path("wide.h5");
  write_declared_shapes(wide, {4, hsize_t(1) << 33}, 4);
  const auto w = input_error([&] { hpt::io::read_xy_hdf5(wide); });
  EXPECT_MENTIONS(w, wide);
  EXPECT_MENTIONS(w, "more than one process can address");
  const auto many = path("many.h5");
  write_declared_shapes(many, {hsize_t(1) << 40, hsize_t(1) << 30}, hsize_t(1) << 40);
  EXPECT_MENTIONS(input_error([&] { hpt::io::read_xy_hdf5(many); }),
                  "more than one process can address");
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer aborts on such a request instead of throwing
  // Addressable, but far beyond this machine's memory (2^45 bytes): the message names the file.
  const auto huge = path("huge.h5");
  write_declared_shapes(huge, {hsize_t(1) << 40, 4}, hsize_t(1) << 40);
  const auto h = input_error([&] { hpt::io::read_xy_hdf5(huge); });
  EXPECT_MENTIONS(h, huge);
  EXPECT_MENTIONS(h, "the sizes this file declares need more memory than this machine gives");
#endif
}

namespace {

struct Deck {
  hpt::OptionSchema schema;
  std::unique_ptr<hpt::Config> config;
  hpt::Registry<hpt::Dataset> registry{"dataset"};
  Deck() {
    hpt::declare_dataset_options(schema);
    config = std::make_unique<hpt::Config>(schema);
    hpt::register_dataset_styles(registry, hpt::io::read_dataset_file);
  }
  std::unique_ptr<hpt::Dataset> create() {
    return registry.create(config->get_string("dataset.style"), *config);
  }
};

}  // namespace

TEST_F(DatasetFiles, FileStylesThroughTheRegistry) {
  // digits: a small file of the digits layout (64 pixels, label 0..9).
  std::string csv;
  std::mt19937 gen(3);
  for (int r = 0; r < 40; ++r) {
    for (int c = 0; c < 64; ++c) csv += std::to_string(gen() % 17) + ",";
    csv += std::to_string(r % 10) + "\n";
  }
  {
    Deck deck;
    deck.config->set("dataset.style", "digits", "test");
    deck.config->set("dataset.path", write_gz("digits.csv.gz", csv), "test");
    EXPECT_EQ(hpt::dataset_file_path(*deck.config), path("digits.csv.gz"));
    const auto ds = deck.create();
    EXPECT_EQ(ds->size(), 40);
    EXPECT_EQ(ds->outputs(), 10);
    EXPECT_EQ(ds->features(), 64);
    EXPECT_EQ(ds->val_size(), 8);
  }
  {
    Deck deck;  // a CSV of the wrong width is not the digits
    deck.config->set("dataset.style", "digits", "test");
    deck.config->set("dataset.path", write_gz("narrow.csv.gz", "1,2,3\n"), "test");
    EXPECT_MENTIONS(input_error([&] { deck.create(); }), "expected the digits layout");
  }
  // hdf5: the task follows /y; an explicit dataset.task must agree with it.
  auto xy = sample_xy();
  xy.targets = {1, 2, 3, 4, 5, 6};
  write_xy(path("reg.h5"), xy);
  {
    Deck deck;
    deck.config->set("dataset.style", "hdf5", "test");
    deck.config->set("dataset.path", path("reg.h5"), "test");
    EXPECT_EQ(deck.create()->task(), hpt::Task::Regression);
    deck.config->set("dataset.task", "classification", "test");
    const auto msg = input_error([&] { deck.create(); });
    EXPECT_MENTIONS(msg, "dataset.task = 'classification'");
    EXPECT_MENTIONS(msg, path("reg.h5"));
  }
  {
    Deck deck;
    deck.config->set("dataset.style", "hdf5", "test");
    EXPECT_MENTIONS(input_error([&] { deck.create(); }), "dataset.path is empty");
    EXPECT_MENTIONS(input_error([&] { hpt::dataset_file_path(*deck.config); }),
                    "dataset.path is empty");
  }
}
