// HDF5 files and groups: attributes of every kind on files, groups and datasets (checked against
// the plain C API too), nested groups and listings, and every way opening a file can fail (missing,
// a directory, a text file named .h5, an empty file, a truncated file): one InputError naming the
// file, nothing on stderr.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "io/hdf5_file.hpp"
#include "io/hdf5_view.hpp"
#include "test_hdf5_support.hpp"

namespace {

using hpt::io::H5Dataset;
using hpt::io::H5File;
using hpt::io::H5Group;
using hpt::test::expect_input_error;
using hpt::test::TempDir;

// A string of `n` random printable characters, newlines and some UTF-8, like a deck text.
std::string random_text(std::size_t n, std::mt19937& gen) {
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyz=[]._ 0123456789\n";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::string text;
  while (text.size() < n) text += alphabet[pick(gen)];
  return text + "µ≈";
}

// Reads a scalar variable-length string attribute with the plain C API.
std::string raw_string_attribute(const std::string& file, const std::string& object,
                                 const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t a = H5Aopen_by_name(f, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  const hid_t t = H5Aget_type(a);
  EXPECT_GT(H5Tis_variable_str(t), 0);
  char* text = nullptr;
  EXPECT_GE(H5Aread(a, t, &text), 0);
  std::string value = text != nullptr ? text : "";
  H5free_memory(text);
  H5Tclose(t);
  H5Aclose(a);
  H5Fclose(f);
  return value;
}

TEST(Hdf5Attributes, EveryKindOnFileGroupAndDatasetRoundTrips) {
  TempDir dir;
  std::mt19937 gen(11);
  const std::string path = dir.file("attrs.h5");
  const std::string deck = random_text(200000, gen);  // larger than the 64 KiB object header
  const std::vector<double> doubles = {0.1, -2.5e-300, std::numeric_limits<double>::max(), 7.0};
  const std::vector<float> floats = {1.5f, -0.25f};
  const std::vector<int> ints = {-3, 0, std::numeric_limits<int>::max()};
  const std::vector<std::int64_t> int64s = {std::numeric_limits<std::int64_t>::min(), 42};
  {
    H5File file = H5File::create(path);
    H5Group group = file.root().create_group("g");
    H5Dataset dataset = hpt::io::write_vector(group, "d", std::vector<double>{1, 2});
    for (hpt::io::H5Object* object :
         {static_cast<hpt::io::H5Object*>(&file.root()), static_cast<hpt::io::H5Object*>(&group),
          static_cast<hpt::io::H5Object*>(&dataset)}) {
      object->write_string_attribute("deck", deck);
      object->write_string_attribute("empty", "");
      object->write_int_attribute("step", std::numeric_limits<std::int64_t>::max());
      object->write_double_attribute("lr", 0.05);
      object->write_vector_attribute("doubles", doubles);
      object->write_vector_attribute("floats", floats);
      object->write_vector_attribute("ints", ints);
      object->write_vector_attribute("int64s", int64s);
      object->write_vector_attribute("none", std::vector<double>{});
      object->write_int_attribute("replaced", 1);
      object->write_string_attribute("replaced", "now a string");
    }
  }
  EXPECT_EQ(raw_string_attribute(path, "/g/d", "deck"), deck);

  H5File file = H5File::open_read(path);
  const H5Group group = file.root().open_group("g");
  const H5Dataset dataset = group.open_dataset("d");
  const std::vector<std::string> expected_names = {"deck", "doubles", "empty", "floats",   "int64s",
                                                   "ints", "lr",      "none",  "replaced", "step"};
  for (const hpt::io::H5Object* object : {static_cast<const hpt::io::H5Object*>(&file.root()),
                                          static_cast<const hpt::io::H5Object*>(&group),
                                          static_cast<const hpt::io::H5Object*>(&dataset)}) {
    SCOPED_TRACE(object->path());
    EXPECT_EQ(object->list_attributes(), expected_names);
    EXPECT_TRUE(object->has_attribute("lr"));
    EXPECT_FALSE(object->has_attribute("missing"));
    EXPECT_EQ(object->read_string_attribute("deck"), deck);
    EXPECT_EQ(object->read_string_attribute("empty"), "");
    EXPECT_EQ(object->read_int_attribute("step"), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(object->read_double_attribute("lr"), 0.05);
    EXPECT_EQ(object->read_double_attribute("step"),  // an integer read as a number
              static_cast<double>(std::numeric_limits<std::int64_t>::max()));
    EXPECT_EQ(object->read_vector_attribute<double>("doubles"), doubles);
    EXPECT_EQ(object->read_vector_attribute<float>("floats"), floats);
    EXPECT_EQ(object->read_vector_attribute<int>("ints"), ints);
    EXPECT_EQ(object->read_vector_attribute<std::int64_t>("int64s"), int64s);
    EXPECT_TRUE(object->read_vector_attribute<double>("none").empty());
    EXPECT_EQ(object->read_string_attribute("replaced"), "now a string");
  }
}

TEST(Hdf5Attributes, ForeignFixedLengthStringsAndScalarsAreRead) {
  TempDir dir;
  const std::string path = dir.file("foreign.h5");
  {  // as another tool would write them: fixed-length, space-padded string; int16; float32
    const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t scalar = H5Screate(H5S_SCALAR);
    const hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 8);
    H5Tset_strpad(str, H5T_STR_SPACEPAD);
    const hid_t a = H5Acreate2(f, "name", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, str, "abc     ");
    const short small = -7;
    const hid_t b = H5Acreate2(f, "small", H5T_STD_I16BE, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(b, H5T_NATIVE_SHORT, &small);
    const float x = 0.5f;
    const hid_t c = H5Acreate2(f, "x", H5T_IEEE_F32BE, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(c, H5T_NATIVE_FLOAT, &x);
    H5Aclose(a);
    H5Aclose(b);
    H5Aclose(c);
    H5Tclose(str);
    H5Sclose(scalar);
    H5Fclose(f);
  }
  H5File file = H5File::open_read(path);
  EXPECT_EQ(file.root().read_string_attribute("name"), "abc");
  EXPECT_EQ(file.root().read_int_attribute("small"), -7);
  EXPECT_EQ(file.root().read_double_attribute("small"), -7.0);
  EXPECT_EQ(file.root().read_double_attribute("x"), 0.5);
}

TEST(Hdf5Attributes, MissingOrMistypedAttributesNameFileObjectAndAttribute) {
  TempDir dir;
  const std::string path = dir.file("bad_attrs.h5");
  H5File file = H5File::create(path);
  H5Group group = file.root().create_group("run");
  group.write_string_attribute("kind", "trace");
  group.write_double_attribute("lr", 0.5);
  group.write_vector_attribute("sizes", std::vector<int>{1, 2, 3});
  expect_input_error([&] { group.read_string_attribute("nope"); },
                     {path, "group '/run'", "no attribute 'nope'", "string"});
  expect_input_error([&] { group.read_int_attribute("kind"); },
                     {path, "'/run'", "'kind'", "string", "expected an integer"});
  expect_input_error([&] { group.read_int_attribute("lr"); },
                     {path, "'lr'", "float64", "expected an integer"});
  expect_input_error([&] { group.read_string_attribute("lr"); },
                     {path, "'lr'", "float64", "expected a string"});
  expect_input_error([&] { group.read_double_attribute("kind"); },
                     {path, "'kind'", "expected a number"});
  expect_input_error([&] { group.read_int_attribute("sizes"); },
                     {path, "'sizes'", "3 values", "single value"});
  expect_input_error([&] { group.read_vector_attribute<std::int64_t>("sizes"); },
                     {path, "'sizes'", "int32", "int64"});
}

TEST(Hdf5Groups, NestedGroupsListingsAndPaths) {
  TempDir dir;
  const std::string path = dir.file("groups.h5");
  H5File file = H5File::create(path);
  H5Group c = file.root().create_group("a/b/c");
  EXPECT_EQ(c.path(), "/a/b/c");
  EXPECT_EQ(c.file_path(), path);
  hpt::io::write_vector(c, "z", std::vector<int>{1});
  hpt::io::write_vector(c, "y", std::vector<int>{2});
  c.create_group("inner");
  hpt::io::write_vector(file.root(), "a/b/top", std::vector<double>{3});
  hpt::io::write_vector(file.root(), "p/q/deep", std::vector<double>{4});  // parents created

  EXPECT_TRUE(file.root().has_group("a"));
  EXPECT_TRUE(file.root().has_group("a/b/c"));
  EXPECT_TRUE(file.root().has_group("/a/b/c/inner"));
  EXPECT_FALSE(file.root().has_group("a/x/c"));
  EXPECT_FALSE(file.root().has_group("a/b/top"));  // a dataset, not a group
  EXPECT_TRUE(file.root().has_dataset("a/b/top"));
  EXPECT_TRUE(file.root().has_dataset("p/q/deep"));
  EXPECT_FALSE(file.root().has_dataset("a/b/c"));
  EXPECT_FALSE(file.root().has_dataset("nowhere/at/all"));
  EXPECT_EQ(c.list_datasets(), (std::vector<std::string>{"y", "z"}));
  EXPECT_EQ(c.list_groups(), std::vector<std::string>{"inner"});
  EXPECT_EQ(file.root().list_groups(), (std::vector<std::string>{"a", "p"}));
  EXPECT_TRUE(file.root().list_datasets().empty());

  // Creating an existing group opens it; the same group reached two ways.
  H5Group again = file.root().create_group("a/b");
  EXPECT_EQ(again.path(), "/a/b");
  EXPECT_EQ(again.open_group("c").list_datasets(), c.list_datasets());
  EXPECT_EQ(c.open_dataset("/a/b/top").path(), "/a/b/top");
  EXPECT_EQ(c.open_dataset("z").shape(), std::vector<std::size_t>{1});
  EXPECT_EQ(c.open_dataset("z").element_description(), "int32");

  expect_input_error([&] { file.root().open_group("a/missing"); },
                     {path, "group '/a/missing'", "not found"});
  expect_input_error([&] { file.root().open_group("a/b/top"); },
                     {path, "'/a/b/top'", "is not a group"});
  expect_input_error([&] { file.root().create_group("a/b/top/sub"); },
                     {path, "'/a/b/top'", "not a group"});
  expect_input_error([&] { c.open_dataset("missing"); },
                     {path, "dataset '/a/b/c/missing'", "not found"});
  c.remove("y");
  EXPECT_EQ(c.list_datasets(), std::vector<std::string>{"z"});

  // The file written through the io layer reads back with the plain C API.
  file.close();
  EXPECT_FALSE(file.is_open());
  std::vector<hsize_t> dims;
  EXPECT_EQ(hpt::test::raw_read_dataset<double>(path, "/p/q/deep", H5T_IEEE_F64LE,
                                                H5T_NATIVE_DOUBLE, dims),
            std::vector<double>{4});
}

TEST(Hdf5Groups, CopiesShareTheObject) {
  TempDir dir;
  const std::string path = dir.file("copies.h5");
  H5File file = H5File::create(path);
  H5Group copy;
  {
    H5Group original = file.root().create_group("g");
    copy = original;
    H5Group second(original);
    second.write_int_attribute("n", 5);
  }  // the original and the second copy are closed; `copy` still refers to the group
  EXPECT_EQ(copy.path(), "/g");
  EXPECT_EQ(copy.read_int_attribute("n"), 5);
  H5Group root = file.root();  // a copy of the root group
  hpt::io::write_vector(root, "g/x", std::vector<int>{1, 2});
  EXPECT_EQ(copy.list_datasets(), std::vector<std::string>{"x"});
  file.close();  // with copies still open
  file = H5File::open_read(path);
  EXPECT_EQ(hpt::io::read_vector<int>(file.root(), "g/x"), (std::vector<int>{1, 2}));
}

TEST(Hdf5Groups, ObjectsOutlivingTheirFileFailCleanly) {
  TempDir dir;
  H5File file = H5File::create(dir.file("closed.h5"));
  H5Group group = file.root().create_group("g");
  H5Group copy = group;
  file.close();  // closes every object of the file, copies included
  ::testing::internal::CaptureStderr();
  EXPECT_ANY_THROW(group.has_attribute("x"));
  EXPECT_ANY_THROW(copy.list_datasets());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(Hdf5Groups, WritingIntoAReadOnlyFileKeepsHdf5sReason) {
  TempDir dir;
  const std::string path = dir.file("read_only.h5");
  {
    H5File file = H5File::create(path);
    hpt::io::write_vector(file.root(), "x", std::vector<int>{1});
  }
  H5File file = H5File::open_read(path);
  H5Dataset x = file.root().open_dataset("x");
  expect_input_error([&] { x.write_string_attribute("s", "v"); },
                     {path, "dataset '/x'", "cannot write attribute 's'", "no write intent"});
  expect_input_error([&] { file.root().create_group("g"); },
                     {path, "cannot create group '/g'", "no write intent"});
  expect_input_error([&] { hpt::io::write_vector(file.root(), "y", std::vector<int>{2}); },
                     {path, "cannot create dataset '/y'", "no write intent"});
}

// Writes an HDF5 file of about 100 KB with the io layer.
void write_real_file(const std::string& path) {
  H5File file = H5File::create(path);
  std::vector<double> values(12000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.5 * double(i);
  hpt::io::write_vector(file.root(), "values", values);
  file.root().write_string_attribute("note", "complete");
}

TEST(Hdf5OpenErrors, EveryBrokenFileIsAnInputErrorNamingIt) {
  TempDir dir;
  const std::string missing = dir.file("missing.h5");
  expect_input_error([&] { H5File::open_read(missing); }, {missing, "does not exist"});
  expect_input_error([&] { H5File::open_readwrite(missing); }, {missing, "does not exist"});

  expect_input_error([&] { H5File::open_read(dir.path().string()); },
                     {dir.path().string(), "is a directory"});

  const std::string text = dir.file("notes.h5");
  std::ofstream(text) << "step,loss\n1,0.5\n2,0.25\n";
  expect_input_error([&] { H5File::open_read(text); }, {text, "not an HDF5 file"});

  const std::string empty = dir.file("empty.h5");
  std::ofstream(empty).flush();
  expect_input_error([&] { H5File::open_read(empty); }, {empty, "not an HDF5 file"});

  const std::string truncated = dir.file("truncated.h5");
  write_real_file(truncated);
  {  // the intact file opens and reads
    H5File file = H5File::open_read(truncated);
    EXPECT_EQ(hpt::io::read_vector<double>(file.root(), "values").size(), 12000u);
  }
  const auto size = std::filesystem::file_size(truncated);
  ASSERT_GT(size, 90000u);
  std::filesystem::resize_file(truncated, size / 2);
  expect_input_error([&] { H5File::open_read(truncated); }, {truncated, "truncated"});
  expect_input_error([&] { H5File::open_readwrite(truncated); }, {truncated, "truncated"});

  const std::string nowhere = dir.file("no/such/dir/out.h5");
  expect_input_error([&] { H5File::create(nowhere); }, {nowhere, "does not exist"});
}

}  // namespace
