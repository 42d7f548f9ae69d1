// The hpt file conventions (root attributes; open_hpt_file refusing missing, non-HDF5, truncated,
// foreign, wrong-kind and wrong-version files with one message naming the file), the atomic writer
// (no temporary left, nothing replaced before commit) and keep_newest_files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/version.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5_format.hpp"
#include "io/hdf5_view.hpp"
#include "test_hdf5_support.hpp"

namespace {

using hpt::io::AtomicH5Writer;
using hpt::io::H5File;
using hpt::io::HptFileKind;
using hpt::test::expect_input_error;
using hpt::test::TempDir;

const char* const kDeck = "[run]\nmode = train\n[model]\nstyle = mlp\n";

void write_hpt_file(const std::string& path, HptFileKind kind) {
  H5File file = H5File::create(path);
  hpt::io::write_hpt_header(file, kind, kDeck, "Serial (test)");
  hpt::io::write_vector(file.root(), "x", std::vector<double>{1, 2, 3});
}

TEST(Hdf5Format, HeaderIsWrittenAndChecked) {
  TempDir dir;
  const std::string path = dir.file("model.h5");
  write_hpt_file(path, HptFileKind::Model);

  H5File file = hpt::io::open_hpt_file(path, HptFileKind::Model);
  // The attributes as any HDF5 reader sees them.
  EXPECT_EQ(file.root().read_int_attribute("hpt_format_version"), 1);
  EXPECT_EQ(file.root().read_string_attribute("hpt_kind"), "model");
  EXPECT_EQ(file.root().read_string_attribute("hpt_version"), hpt::kVersion);
  EXPECT_EQ(file.root().read_string_attribute("hpt_backend"), "Serial (test)");
  EXPECT_EQ(file.root().read_string_attribute("hpt_precision"), hpt::kPrecision);
  EXPECT_EQ(file.root().read_string_attribute("hpt_deck"), kDeck);
  const hpt::io::HptHeader header = hpt::io::read_hpt_header(file);
  EXPECT_EQ(header.format_version, hpt::io::kHptFormatVersion);
  EXPECT_EQ(header.kind, "model");
  EXPECT_EQ(header.deck, kDeck);
  EXPECT_EQ(hpt::io::read_vector<double>(file.root(), "x"), (std::vector<double>{1, 2, 3}));

  // Every kind round-trips under its own name; the default backend names Kokkos' space.
  for (const HptFileKind kind : {HptFileKind::Rollout, HptFileKind::Model, HptFileKind::Bench,
                                 HptFileKind::Checkpoint, HptFileKind::Trace}) {
    const std::string p = dir.file(std::string("kind_") + hpt::io::kind_name(kind) + ".h5");
    {
      H5File f = H5File::create(p);
      hpt::io::write_hpt_header(f, kind, kDeck);
    }
    const H5File f = hpt::io::open_hpt_file(p, kind);
    EXPECT_EQ(f.root().read_string_attribute("hpt_kind"), hpt::io::kind_name(kind));
    EXPECT_NE(
        f.root().read_string_attribute("hpt_backend").find(Kokkos::DefaultExecutionSpace::name()),
        std::string::npos);
  }
  EXPECT_STREQ(hpt::io::kind_name(HptFileKind::Checkpoint), "checkpoint");
}

TEST(Hdf5Format, WritableOpenAllowsAppending) {
  TempDir dir;
  const std::string path = dir.file("trace.h5");
  write_hpt_file(path, HptFileKind::Trace);
  {
    H5File file = hpt::io::open_hpt_file(path, HptFileKind::Trace, 1, /*writable=*/true);
    hpt::io::write_vector(file.root(), "y", std::vector<int>{7});
  }
  H5File file = hpt::io::open_hpt_file(path, HptFileKind::Trace);
  EXPECT_EQ(hpt::io::read_vector<int>(file.root(), "y"), std::vector<int>{7});
}

TEST(Hdf5Format, EveryWrongFileIsOneInputErrorNamingIt) {
  TempDir dir;
  const std::string missing = dir.file("missing.h5");
  expect_input_error([&] { hpt::io::open_hpt_file(missing, HptFileKind::Checkpoint); },
                     {missing, "does not exist"});

  const std::string text = dir.file("deck.h5");
  std::ofstream(text) << "[run]\nmode = train\n";
  expect_input_error([&] { hpt::io::open_hpt_file(text, HptFileKind::Checkpoint); },
                     {text, "not an HDF5 file"});

  const std::string truncated = dir.file("truncated.h5");
  {
    H5File file = H5File::create(truncated);
    hpt::io::write_hpt_header(file, HptFileKind::Checkpoint, kDeck);
    hpt::io::write_vector(file.root(), "big", std::vector<double>(20000, 1.5));
  }
  std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) / 2);
  expect_input_error([&] { hpt::io::open_hpt_file(truncated, HptFileKind::Checkpoint); },
                     {truncated, "truncated"});

  const std::string foreign = dir.file("foreign.h5");
  {
    H5File file = H5File::create(foreign);
    hpt::io::write_vector(file.root(), "X", std::vector<double>{1, 2});
    file.root().write_string_attribute("creator", "h5py");
  }
  expect_input_error([&] { hpt::io::open_hpt_file(foreign, HptFileKind::Model); },
                     {foreign, "not one written by hpt", "hpt_format_version"});

  const std::string model = dir.file("model.h5");
  write_hpt_file(model, HptFileKind::Model);
  expect_input_error([&] { hpt::io::open_hpt_file(model, HptFileKind::Checkpoint); },
                     {model, "hpt model file", "expected an hpt checkpoint file"});

  const std::string future = dir.file("future.h5");
  write_hpt_file(future, HptFileKind::Checkpoint);
  {
    H5File file = H5File::open_readwrite(future);
    file.root().write_int_attribute("hpt_format_version", 2);
  }
  expect_input_error([&] { hpt::io::open_hpt_file(future, HptFileKind::Checkpoint); },
                     {future, "format version 2", "expected format version 1"});
  // The caller may ask for another version explicitly.
  EXPECT_NO_THROW(hpt::io::open_hpt_file(future, HptFileKind::Checkpoint, 2));

  const std::string mistyped = dir.file("mistyped.h5");
  {
    H5File file = H5File::create(mistyped);
    file.root().write_string_attribute("hpt_format_version", "one");
    file.root().write_string_attribute("hpt_kind", "model");
  }
  expect_input_error([&] { hpt::io::open_hpt_file(mistyped, HptFileKind::Model); },
                     {mistyped, "hpt_format_version", "expected an integer"});
}

// The value of root attribute "value" of an HDF5 file.
std::int64_t stored_value(const std::string& path) {
  return H5File::open_read(path).root().read_int_attribute("value");
}

TEST(Hdf5AtomicWriter, CommitLeavesOnlyTheFinalFile) {
  TempDir dir;
  const std::string path = dir.file("ckpt.h5");
  {
    AtomicH5Writer writer(path);
    EXPECT_EQ(writer.temp_path(), path + ".tmp." + std::to_string(::getpid()));
    EXPECT_TRUE(std::filesystem::exists(writer.temp_path()));
    EXPECT_FALSE(std::filesystem::exists(path));
    hpt::io::write_hpt_header(writer.file(), HptFileKind::Checkpoint, kDeck);
    auto group = writer.file().root().create_group("state");  // still open at commit
    const auto root_copy = writer.file().root();              // so is this copy
    hpt::io::write_vector(group, "v", std::vector<double>{4, 5});
    writer.file().root().write_int_attribute("value", 1);
    writer.commit();
    EXPECT_TRUE(writer.committed());
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"ckpt.h5"});
  H5File file = hpt::io::open_hpt_file(path, HptFileKind::Checkpoint);
  EXPECT_EQ(hpt::io::read_vector<double>(file.root(), "state/v"), (std::vector<double>{4, 5}));
}

TEST(Hdf5AtomicWriter, ExceptionBeforeCommitLeavesNothing) {
  TempDir dir;
  const std::string path = dir.file("ckpt.h5");
  EXPECT_THROW(
      {
        AtomicH5Writer writer(path);
        writer.file().root().write_int_attribute("value", 1);
        throw std::runtime_error("interrupted");
      },
      std::runtime_error);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Hdf5AtomicWriter, ExistingFileIsReplacedOnlyOnCommit) {
  TempDir dir;
  const std::string path = dir.file("model.h5");
  {
    H5File file = H5File::create(path);
    file.root().write_int_attribute("value", 1);
  }
  {  // abandoned: the old file stays
    AtomicH5Writer writer(path);
    writer.file().root().write_int_attribute("value", 2);
    writer.file().flush();
    EXPECT_EQ(stored_value(path), 1);
  }
  EXPECT_EQ(stored_value(path), 1);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.h5"});
  {
    AtomicH5Writer writer(path);
    writer.file().root().write_int_attribute("value", 3);
    EXPECT_EQ(stored_value(path), 1);  // readers see the old file until commit
    writer.commit();
    EXPECT_EQ(stored_value(path), 3);
  }
  EXPECT_EQ(stored_value(path), 3);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.h5"});
}

TEST(Hdf5AtomicWriter, EditingACopyOfAnExistingFile) {
  TempDir dir;
  const std::string path = dir.file("trace.h5");
  write_hpt_file(path, HptFileKind::Trace);  // holds x = {1, 2, 3}
  {  // abandoned edit: the file is unchanged, no temporary remains
    AtomicH5Writer writer(path, hpt::io::AtomicStart::CopyOfExisting);
    EXPECT_EQ(hpt::io::read_vector<double>(writer.file().root(), "x"),
              (std::vector<double>{1, 2, 3}));
    hpt::io::write_vector(writer.file().root(), "x", std::vector<double>{9});
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"trace.h5"});
  EXPECT_EQ(
      hpt::io::read_vector<double>(hpt::io::open_hpt_file(path, HptFileKind::Trace).root(), "x"),
      (std::vector<double>{1, 2, 3}));
  {
    AtomicH5Writer writer(path, hpt::io::AtomicStart::CopyOfExisting);
    hpt::io::write_vector(writer.file().root(), "y", std::vector<int>{4});
    writer.commit();
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"trace.h5"});
  H5File file = hpt::io::open_hpt_file(path, HptFileKind::Trace);
  EXPECT_EQ(hpt::io::read_vector<double>(file.root(), "x"), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(hpt::io::read_vector<int>(file.root(), "y"), std::vector<int>{4});

  const std::string missing = dir.file("missing.h5");
  expect_input_error([&] { AtomicH5Writer w(missing, hpt::io::AtomicStart::CopyOfExisting); },
                     {missing, "does not exist"});
  const std::string text = dir.file("text.h5");
  std::ofstream(text) << "not hdf5";
  expect_input_error([&] { AtomicH5Writer w(text, hpt::io::AtomicStart::CopyOfExisting); },
                     {text, "not an HDF5 file"});
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"text.h5", "trace.h5"}));
}

TEST(Hdf5AtomicWriter, MissingDirectoryIsAnInputError) {
  TempDir dir;
  const std::string path = dir.file("no/dir/ckpt.h5");
  expect_input_error([&] { AtomicH5Writer writer(path); }, {path, "does not exist"});
}

TEST(Hdf5KeepNewest, KeepsTheNewestByModificationTime) {
  TempDir dir;
  const auto now = std::filesystem::file_time_type::clock::now();
  // Steps 1..5; the modification times put step 2 newest (a restarted run), so time, not the name,
  // decides.
  const std::vector<std::pair<std::string, int>> files = {{"ckpt_0001.h5", 10},
                                                          {"ckpt_0002.h5", 60},
                                                          {"ckpt_0003.h5", 30},
                                                          {"ckpt_0004.h5", 40},
                                                          {"ckpt_0005.h5", 50}};
  for (const auto& [name, seconds] : files) {
    std::ofstream(dir.file(name)) << name;
    std::filesystem::last_write_time(dir.file(name), now - std::chrono::seconds(100 - seconds));
  }
  std::ofstream(dir.file("ckpt_0009.h5.tmp.12345")) << "temporary";  // a writer in progress
  std::ofstream(dir.file("other_0001.h5")) << "other prefix";
  std::ofstream(dir.file("ckpt_0008.txt")) << "other suffix";
  std::filesystem::last_write_time(dir.file("ckpt_0009.h5.tmp.12345"), now - std::chrono::hours(9));

  std::vector<std::string> deleted = hpt::io::keep_newest_files(dir.file("ckpt_"), ".h5", 3);
  std::sort(deleted.begin(), deleted.end());
  EXPECT_EQ(deleted,
            (std::vector<std::string>{dir.file("ckpt_0001.h5"), dir.file("ckpt_0003.h5")}));
  EXPECT_EQ(dir.entries(),
            (std::vector<std::string>{"ckpt_0002.h5", "ckpt_0004.h5", "ckpt_0005.h5",
                                      "ckpt_0008.txt", "ckpt_0009.h5.tmp.12345", "other_0001.h5"}));

  // Equal times: the larger name counts as newer.
  for (const char* name : {"ckpt_0002.h5", "ckpt_0004.h5", "ckpt_0005.h5"})
    std::filesystem::last_write_time(dir.file(name), now);
  EXPECT_EQ(hpt::io::keep_newest_files(dir.file("ckpt_"), ".h5", 1),
            (std::vector<std::string>{dir.file("ckpt_0004.h5"), dir.file("ckpt_0002.h5")}));
  EXPECT_TRUE(hpt::io::keep_newest_files(dir.file("ckpt_"), ".h5", 1).empty());
  EXPECT_TRUE(std::filesystem::exists(dir.file("ckpt_0005.h5")));
}

TEST(Hdf5KeepNewest, WithCommittedCheckpoints) {
  TempDir dir;
  for (int step = 1; step <= 4; ++step) {
    const std::string path = dir.file("run_" + std::to_string(step) + ".h5");
    AtomicH5Writer writer(path);
    writer.file().root().write_int_attribute("value", step);
    writer.commit();
    std::filesystem::last_write_time(
        path, std::filesystem::file_time_type::clock::now() + std::chrono::seconds(step));
    hpt::io::keep_newest_files(dir.path().string() + "/", ".h5", 2);
  }
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"run_3.h5", "run_4.h5"}));
  EXPECT_EQ(stored_value(dir.file("run_4.h5")), 4);
}

}  // namespace
