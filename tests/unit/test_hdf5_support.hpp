#pragma once
// Shared by the HDF5 tests: a per-test temporary directory, an InputError check on message text,
// and plain HDF5 C calls (written here, independent of io/) to read what the io layer wrote.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace hpt::test {

// A fresh directory under the system temporary directory, removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("hpt_") + info->test_suite_name() + "_" + info->name() + "_" +
                       std::to_string(::getpid());
    for (char& c : name)
      if (c == '/') c = '_';
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }
  // Names of the entries in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

// Runs `action`, expects hpt::InputError whose message contains every one of `parts`, and expects
// nothing on stderr (HDF5 must not print its error stack).
inline void expect_input_error(const std::function<void()>& action,
                               const std::vector<std::string>& parts) {
  ::testing::internal::CaptureStderr();
  std::string message;
  bool thrown = false;
  try {
    action();
  } catch (const hpt::InputError& e) {
    thrown = true;
    message = e.what();
  } catch (...) {
    ::testing::internal::GetCapturedStderr();
    throw;
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(thrown) << "expected hpt::InputError";
  for (const std::string& part : parts)
    EXPECT_NE(message.find(part), std::string::npos)
        << "message lacks '" << part << "': " << message;
  EXPECT_EQ(err, "") << "stderr output while failing";
}

// Reads a whole dataset with the plain C API: stored type must equal `stored_type`; returns the
// values in file order and the dims through `dims`.
template <class T>
std::vector<T> raw_read_dataset(const std::string& file, const std::string& dataset,
                                hid_t stored_type, hid_t memory_type, std::vector<hsize_t>& dims) {
  std::vector<T> values;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(f, 0);
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  EXPECT_GE(d, 0);
  const hid_t t = H5Dget_type(d);
  EXPECT_GT(H5Tequal(t, stored_type), 0) << "stored type of " << dataset;
  const hid_t s = H5Dget_space(d);
  dims.assign(static_cast<std::size_t>(H5Sget_simple_extent_ndims(s)), 0);
  H5Sget_simple_extent_dims(s, dims.data(), nullptr);
  const hssize_t n = H5Sget_simple_extent_npoints(s);
  values.resize(static_cast<std::size_t>(n));
  if (n > 0) {
    EXPECT_GE(H5Dread(d, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  }
  H5Sclose(s);
  H5Tclose(t);
  H5Dclose(d);
  H5Fclose(f);
  return values;
}

}  // namespace hpt::test
