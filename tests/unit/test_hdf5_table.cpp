// Appendable datasets and tables: written in several appends (and rows), read back whole and
// compared with host vectors built in the test; chunking and compression checked with the C API;
// continuing after reopening, truncation for restarts, and the destructor's flush.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>

#include "io/hdf5_file.hpp"
#include "io/hdf5_table.hpp"
#include "io/hdf5_view.hpp"
#include "test_hdf5_support.hpp"

namespace {

using hpt::io::H5Appendable;
using hpt::io::H5Column;
using hpt::io::H5Element;
using hpt::io::H5File;
using hpt::io::H5Table;
using hpt::test::expect_input_error;
using hpt::test::TempDir;

// Layout, chunk dims and filter count of a dataset, through the plain C API.
struct Storage {
  H5D_layout_t layout;
  std::vector<hsize_t> chunk;
  int filters;
  hsize_t max_rows;
};
Storage raw_storage(const std::string& file, const std::string& dataset) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  const hid_t p = H5Dget_create_plist(d);
  const hid_t s = H5Dget_space(d);
  Storage st{H5Pget_layout(p), {}, H5Pget_nfilters(p), 0};
  const int rank = H5Sget_simple_extent_ndims(s);
  st.chunk.resize(std::size_t(rank));
  H5Pget_chunk(p, rank, st.chunk.data());
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank)), max_dims(dims.size());
  H5Sget_simple_extent_dims(s, dims.data(), max_dims.data());
  st.max_rows = max_dims[0];
  H5Sclose(s);
  H5Pclose(p);
  H5Dclose(d);
  H5Fclose(f);
  return st;
}

TEST(Hdf5Appendable, SeveralAppendsReadBackWhole) {
  TempDir dir;
  const std::string path = dir.file("append.h5");
  std::mt19937 gen(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> all_rows;  // what the file must hold: every appended row, in order
  std::vector<std::int64_t> all_steps;
  {
    H5File file = H5File::create(path);
    H5Appendable paths =
        H5Appendable::create(file.root(), "rollout/paths", H5Element::Float64, {2, 3}, 4);
    H5Appendable steps = H5Appendable::create(file.root(), "rollout/steps", H5Element::Int64, {});
    EXPECT_EQ(paths.rows(), 0u);
    EXPECT_EQ(paths.row_size(), 6u);
    for (const std::size_t n : {1u, 5u, 0u, 7u, 2u}) {
      std::vector<double> rows(n * 6);
      for (double& v : rows) v = normal(gen);
      paths.append(rows);
      all_rows.insert(all_rows.end(), rows.begin(), rows.end());
      for (std::size_t k = 0; k < n; ++k) {
        const auto step = std::int64_t(all_steps.size()) * 10;
        steps.append(&step, 1);
        all_steps.push_back(step);
      }
    }
    EXPECT_EQ(paths.rows(), 15u);
    EXPECT_EQ(steps.rows(), 15u);
  }
  H5File file = H5File::open_read(path);
  const auto paths = hpt::io::read_array_alloc<double>(file.root(), "rollout/paths");
  EXPECT_EQ(paths.shape, (std::vector<std::size_t>{15, 2, 3}));
  EXPECT_EQ(paths.values, all_rows);
  EXPECT_EQ(hpt::io::read_vector<std::int64_t>(file.root(), "rollout/steps"), all_steps);
  file.close();

  const Storage st = raw_storage(path, "/rollout/paths");
  EXPECT_EQ(st.layout, H5D_CHUNKED);
  EXPECT_EQ(st.chunk, (std::vector<hsize_t>{4, 2, 3}));
  EXPECT_EQ(st.max_rows, H5S_UNLIMITED);
  if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
    EXPECT_EQ(st.filters, 2);  // shuffle + deflate
  }
}

TEST(Hdf5Appendable, LargeRowsGetSmallerChunksAndReopenedDatasetsGrowAndShrink) {
  TempDir dir;
  const std::string path = dir.file("grow.h5");
  std::vector<float> expected;
  {
    H5File file = H5File::create(path);
    auto big = H5Appendable::create(file.root(), "big", H5Element::Float32, {512, 256}, 1024, 0);
    std::vector<float> row(512 * 256);
    for (std::size_t k = 0; k < row.size(); ++k) row[k] = float(k % 1000) * 0.5f;
    big.append(row);
    expected = row;
  }
  const Storage st = raw_storage(path, "/big");
  EXPECT_EQ(st.chunk, (std::vector<hsize_t>{2, 512, 256}));  // 512 KiB rows: 2 per 1 MiB chunk
  EXPECT_EQ(st.filters, 0);
  {
    H5File file = H5File::open_readwrite(path);
    auto big = H5Appendable::open(file.root(), "big", H5Element::Float32);
    EXPECT_EQ(big.rows(), 1u);
    EXPECT_EQ(big.row_shape(), (std::vector<std::size_t>{512, 256}));
    std::vector<float> two(2 * 512 * 256, -1.0f);
    big.append(two);
    big.resize(2);  // keeps the first two rows
    expected.insert(expected.end(), two.begin(), two.begin() + 512 * 256);
    EXPECT_EQ(big.rows(), 2u);
    expect_input_error([&] { H5Appendable::open(file.root(), "big", H5Element::Float64); },
                       {path, "/big", "float32", "float64"});
  }
  H5File file = H5File::open_read(path);
  const auto back = hpt::io::read_array_alloc<float>(file.root(), "big");
  EXPECT_EQ(back.shape, (std::vector<std::size_t>{2, 512, 256}));
  EXPECT_EQ(back.values, expected);
}

TEST(Hdf5Appendable, FixedDatasetIsNotAppendable) {
  TempDir dir;
  const std::string path = dir.file("fixed.h5");
  H5File file = H5File::create(path);
  hpt::io::write_vector(file.root(), "x", std::vector<double>{1, 2});
  expect_input_error([&] { H5Appendable::open(file.root(), "x", H5Element::Float64); },
                     {path, "/x", "not an appendable dataset"});
  expect_input_error([&] { H5Appendable::create(file.root(), "x", H5Element::Float64, {}); },
                     {path, "/x", "exists already"});
}

TEST(Hdf5Table, RowsBufferedFlushedAndReadAsPlainColumns) {
  TempDir dir;
  const std::string path = dir.file("trace.h5");
  const std::vector<H5Column> columns = {
      {"step", H5Element::Int64}, {"loss", H5Element::Float64}, {"phase", H5Element::Int64}};
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> uniform(0.0, 2.0);
  std::vector<std::int64_t> steps, phases;
  std::vector<double> losses;
  auto add_rows = [&](H5Table& table, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::int64_t step = std::int64_t(steps.size());
      const double loss = uniform(gen);
      const int phase = int(step % 4);
      table.append_row({step, loss, phase});
      steps.push_back(step);
      losses.push_back(loss);
      phases.push_back(phase);
    }
  };
  {
    H5File file = H5File::create(path);
    H5Table table = H5Table::create(file.root(), "trace", columns, 100);
    add_rows(table, 250);  // two automatic flushes, 50 rows buffered
    EXPECT_EQ(table.rows(), 250u);
    EXPECT_EQ(table.column_index("phase"), 2u);
    EXPECT_THROW(table.append_row({1, 2.5, 0.5}), hpt::InternalError);  // phase is int64
    EXPECT_THROW(table.append_row({1, 2.5}), hpt::InternalError);       // too few values
    table.flush();
  }
  {
    H5File file = H5File::open_read(path);
    EXPECT_EQ(file.root().open_group("trace").read_string_attribute("hpt_columns"),
              "step,loss,phase");
    EXPECT_EQ(hpt::io::read_vector<std::int64_t>(file.root(), "trace/step"), steps);
    EXPECT_EQ(hpt::io::read_vector<double>(file.root(), "trace/loss"), losses);
    EXPECT_EQ(hpt::io::read_vector<std::int64_t>(file.root(), "trace/phase"), phases);
  }
  {  // continue the table, dropping rows past a "checkpoint" at row 200 first
    H5File file = H5File::open_readwrite(path);
    H5Table table = H5Table::open(file.root(), "trace");
    ASSERT_EQ(table.columns().size(), 3u);
    EXPECT_EQ(table.columns()[1].name, "loss");
    EXPECT_EQ(table.columns()[1].element, H5Element::Float64);
    EXPECT_EQ(table.rows(), 250u);
    table.truncate(200);
    steps.resize(200);
    losses.resize(200);
    phases.resize(200);
    add_rows(table, 30);
    // no flush(): the destructor writes the buffered rows while the file is still open
  }
  H5File file = H5File::open_read(path);
  EXPECT_EQ(hpt::io::read_vector<std::int64_t>(file.root(), "trace/step"), steps);
  EXPECT_EQ(hpt::io::read_vector<double>(file.root(), "trace/loss"), losses);
  EXPECT_EQ(hpt::io::read_vector<std::int64_t>(file.root(), "trace/phase"), phases);
  EXPECT_EQ(steps.size(), 230u);
}

TEST(Hdf5Table, RowsLostByClosingTheFileFirstAreReportedOnStderr) {
  TempDir dir;
  H5File file = H5File::create(dir.file("lost.h5"));
  auto table = std::make_unique<H5Table>(
      H5Table::create(file.root(), "events", {{"step", H5Element::Int64}}));
  table->append_row({7});
  table->append_row({8});
  file.close();
  ::testing::internal::CaptureStderr();
  table.reset();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("2 rows of table '/events'"), std::string::npos) << err;
  EXPECT_NE(err.find("were not written"), std::string::npos) << err;
}

TEST(Hdf5Table, OpeningSomethingElseIsAnInputError) {
  TempDir dir;
  const std::string path = dir.file("not_table.h5");
  H5File file = H5File::create(path);
  file.root().create_group("plain");
  H5Table table =
      H5Table::create(file.root(), "t", {{"a", H5Element::Float64}, {"b", H5Element::Int64}});
  table.append_row({1.0, 2});
  table.flush();
  H5Appendable::open(file.root(), "t/b", H5Element::Int64).resize(3);  // damage: unequal columns
  expect_input_error([&] { H5Table::open(file.root(), "plain"); },
                     {path, "/plain", "not an hpt table"});
  expect_input_error([&] { H5Table::open(file.root(), "t"); },
                     {path, "/t", "'b' has 3 rows", "'a' has 1"});
  expect_input_error([&] { H5Table::open(file.root(), "missing"); },
                     {path, "/missing", "not found"});
  expect_input_error(
      [&] {
        H5Table::create(file.root(), "t", {{"a", H5Element::Float64}});
      },
      {path, "/t", "exists already"});
}

}  // namespace
