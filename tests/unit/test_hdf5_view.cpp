// Views and host vectors to and from HDF5: bitwise round trips of rank 1-4 Views of float, double,
// int and int64 on every backend, checked against the plain C API (stored type, row-major order),
// and the messages of reads with the wrong shape, rank, element type or a missing dataset.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>

#include "io/hdf5_file.hpp"
#include "io/hdf5_view.hpp"
#include "test_hdf5_support.hpp"
#include "test_support.hpp"

namespace {

using hpt::io::H5File;
using hpt::io::H5Group;
using hpt::test::expect_input_error;
using hpt::test::TempDir;

template <class Space, class T>
struct ViewCase {
  using space = Space;
  using value = T;
};

using ViewCases =
    hpt::test::CasesOf<ViewCase, hpt::test::EnabledSpaces, float, double, int, std::int64_t>::types;

// The stored and native HDF5 types the test expects, written out independently of io/.
template <class T>
hid_t expected_stored_type() {
  if constexpr (std::is_same<T, float>::value) {
    return H5T_IEEE_F32LE;
  } else if constexpr (std::is_same<T, double>::value) {
    return H5T_IEEE_F64LE;
  } else if constexpr (std::is_same<T, int>::value) {
    return H5T_STD_I32LE;
  } else {
    static_assert(std::is_same<T, std::int64_t>::value);
    return H5T_STD_I64LE;
  }
}
template <class T>
hid_t native_type() {
  if constexpr (std::is_same<T, float>::value) {
    return H5T_NATIVE_FLOAT;
  } else if constexpr (std::is_same<T, double>::value) {
    return H5T_NATIVE_DOUBLE;
  } else if constexpr (std::is_same<T, int>::value) {
    return H5T_NATIVE_INT;
  } else {
    static_assert(std::is_same<T, std::int64_t>::value);
    return H5T_NATIVE_INT64;
  }
}

// Random values over the whole range, with NaN, -0, infinities and a denormal for floating types.
template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937& gen) {
  std::vector<T> v(n);
  if constexpr (std::is_floating_point<T>::value) {
    std::uniform_real_distribution<T> dist(-1000, 1000);
    for (T& x : v) x = dist(gen);
    const T special[] = {std::numeric_limits<T>::quiet_NaN(),  T(-0.0),
                         std::numeric_limits<T>::infinity(),   -std::numeric_limits<T>::infinity(),
                         std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::max()};
    for (std::size_t i = 0; i < std::size(special) && i < n; ++i) v[(i * 7) % n] = special[i];
  } else {
    std::uniform_int_distribution<T> dist(std::numeric_limits<T>::min(),
                                          std::numeric_limits<T>::max());
    for (T& x : v) x = dist(gen);
  }
  return v;
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T, int R>
struct Pointers {
  using type = typename Pointers<T, R - 1>::type*;
};
template <class T>
struct Pointers<T, 0> {
  using type = T;
};

template <class T, int R, class Mem>
using TestView = Kokkos::View<typename Pointers<T, R>::type, Kokkos::LayoutRight, Mem>;

template <class ViewType>
ViewType make_view(const std::string& label, const std::vector<std::size_t>& s) {
  constexpr int rank = ViewType::traits::rank;
  if constexpr (rank == 1) {
    return ViewType(label, s[0]);
  } else if constexpr (rank == 2) {
    return ViewType(label, s[0], s[1]);
  } else if constexpr (rank == 3) {
    return ViewType(label, s[0], s[1], s[2]);
  } else {
    return ViewType(label, s[0], s[1], s[2], s[3]);
  }
}

// Element (i0, i1, ...) of a host View of any rank 1-4.
template <class HostView>
typename HostView::reference_type at(const HostView& h, const std::array<std::size_t, 4>& i) {
  constexpr int rank = HostView::traits::rank;
  if constexpr (rank == 1) {
    return h(i[0]);
  } else if constexpr (rank == 2) {
    return h(i[0], i[1]);
  } else if constexpr (rank == 3) {
    return h(i[0], i[1], i[2]);
  } else {
    return h(i[0], i[1], i[2], i[3]);
  }
}

// Calls fn(flat row-major index, multi-index) for every index of `shape`.
template <class Fn>
void for_each_index(const std::vector<std::size_t>& shape, Fn&& fn) {
  std::size_t total = 1;
  for (const std::size_t d : shape) total *= d;
  for (std::size_t flat = 0; flat < total; ++flat) {
    std::array<std::size_t, 4> idx{};
    std::size_t rest = flat;
    for (std::size_t r = shape.size(); r-- > 0;) {
      idx[r] = rest % shape[r];
      rest /= shape[r];
    }
    fn(flat, idx);
  }
}

template <class C>
class Hdf5ViewRoundTrip : public ::testing::Test {};
TYPED_TEST_SUITE(Hdf5ViewRoundTrip, ViewCases, hpt::test::TypedTestNames);

template <class Space, class T, int R>
void check_round_trip(const TempDir& dir, const std::vector<std::size_t>& shape,
                      std::mt19937& gen) {
  using Mem = typename Space::memory_space;
  using DeviceView = TestView<T, R, Mem>;
  std::size_t total = 1;
  for (const std::size_t d : shape) total *= d;
  const std::vector<T> reference = random_values<T>(total, gen);  // row-major, as HDF5 stores

  DeviceView view = make_view<DeviceView>("v", shape);
  auto host = Kokkos::create_mirror_view(view);
  for_each_index(shape, [&](std::size_t flat, const auto& i) { at(host, i) = reference[flat]; });
  Kokkos::deep_copy(view, host);

  const std::string path = dir.file("rank" + std::to_string(R) + ".h5");
  {
    H5File file = H5File::create(path);
    H5Group group = file.root().create_group("fields/a");
    hpt::io::write_view(group, "v", view);
    // A const View of the same data writes the same.
    typename DeviceView::const_type const_view = view;
    hpt::io::write_view(file.root(), "const_v", const_view);
    file.close();
  }

  // The bytes on disk, through the plain C API: stored type, shape and row-major order.
  for (const char* name : {"/fields/a/v", "/const_v"}) {
    std::vector<hsize_t> dims;
    const std::vector<T> raw = hpt::test::raw_read_dataset<T>(path, name, expected_stored_type<T>(),
                                                              native_type<T>(), dims);
    ASSERT_EQ(dims, std::vector<hsize_t>(shape.begin(), shape.end())) << name;
    ASSERT_EQ(raw.size(), total);
    for (std::size_t k = 0; k < total; ++k)
      ASSERT_TRUE(same_bits(raw[k], reference[k])) << name << " element " << k;
  }

  H5File file = H5File::open_read(path);
  DeviceView back = make_view<DeviceView>("back", shape);
  hpt::io::read_view(file.root().open_group("fields/a"), "v", back);
  auto back_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
  for_each_index(shape, [&](std::size_t flat, const auto& i) {
    ASSERT_TRUE(same_bits(T(at(back_host, i)), reference[flat])) << "read_view, element " << flat;
  });

  const DeviceView alloc = hpt::io::read_view_alloc<DeviceView>(file.root(), "fields/a/v");
  for (int r = 0; r < R; ++r) ASSERT_EQ(alloc.extent(r), shape[r]);
  auto alloc_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), alloc);
  for_each_index(shape, [&](std::size_t flat, const auto& i) {
    ASSERT_TRUE(same_bits(T(at(alloc_host, i)), reference[flat]))
        << "read_view_alloc, element " << flat;
  });
}

TYPED_TEST(Hdf5ViewRoundTrip, Ranks1To4AreBitwiseEqual) {
  using Space = typename TypeParam::space;
  using T = typename TypeParam::value;
  TempDir dir;
  std::mt19937 gen(1234);
  check_round_trip<Space, T, 1>(dir, {37}, gen);
  check_round_trip<Space, T, 2>(dir, {5, 7}, gen);
  check_round_trip<Space, T, 3>(dir, {4, 3, 6}, gen);
  check_round_trip<Space, T, 4>(dir, {3, 2, 5, 4}, gen);
}

TYPED_TEST(Hdf5ViewRoundTrip, ReshapedViewsAndEmptyViews) {
  using Space = typename TypeParam::space;
  using T = typename TypeParam::value;
  using Mem = typename Space::memory_space;
  TempDir dir;
  std::mt19937 gen(99);
  const std::vector<T> reference = random_values<T>(12, gen);
  TestView<T, 1, Mem> flat("flat", 12);
  auto flat_host = Kokkos::create_mirror_view(flat);
  for (std::size_t k = 0; k < 12; ++k) flat_host(k) = reference[k];
  Kokkos::deep_copy(flat, flat_host);

  const std::string path = dir.file("as.h5");
  H5File file = H5File::create(path);
  hpt::io::write_view_as(file.root(), "matrix", flat, {3, 4});
  hpt::io::write_view(file.root(), "empty", TestView<T, 2, Mem>("empty", 0, 5));
  file.close();

  std::vector<hsize_t> dims;
  const std::vector<T> raw = hpt::test::raw_read_dataset<T>(
      path, "/matrix", expected_stored_type<T>(), native_type<T>(), dims);
  EXPECT_EQ(dims, (std::vector<hsize_t>{3, 4}));
  for (std::size_t k = 0; k < 12; ++k) EXPECT_TRUE(same_bits(raw[k], reference[k]));

  file = H5File::open_read(path);
  TestView<T, 1, Mem> back("back", 12);
  hpt::io::read_view_as(file.root(), "matrix", back, {3, 4});
  auto back_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
  for (std::size_t k = 0; k < 12; ++k) EXPECT_TRUE(same_bits(T(back_host(k)), reference[k]));
  const auto empty = hpt::io::read_view_alloc<TestView<T, 2, Mem>>(file.root(), "empty");
  EXPECT_EQ(empty.extent(0), 0u);
  EXPECT_EQ(empty.extent(1), 5u);
  // The same data under the wrong shape is refused.
  expect_input_error(
      [&] {
        hpt::io::read_view_as(file.root(), "matrix", back, {4, 3});
      },
      {path, "/matrix", "wrong shape", "(3, 4)", "(4, 3)"});
}

TEST(Hdf5HostArrays, VectorsArraysAndScalarsRoundTrip) {
  TempDir dir;
  std::mt19937 gen(7);
  const std::vector<double> d = random_values<double>(50, gen);
  const std::vector<std::int64_t> i64 = random_values<std::int64_t>(24, gen);
  const std::vector<float> scalar = {3.25f};
  const std::string path = dir.file("host.h5");
  {
    H5File file = H5File::create(path);
    hpt::io::write_vector(file.root(), "d", d);
    hpt::io::write_array(file.root(), "g/i64", i64, {2, 3, 4});
    hpt::io::write_array(file.root(), "scalar", scalar, {});
    hpt::io::write_vector(file.root(), "none", std::vector<int>{});
  }
  std::vector<hsize_t> dims;
  const auto raw = hpt::test::raw_read_dataset<std::int64_t>(path, "/g/i64", H5T_STD_I64LE,
                                                             H5T_NATIVE_INT64, dims);
  EXPECT_EQ(dims, (std::vector<hsize_t>{2, 3, 4}));
  EXPECT_EQ(raw, i64);

  H5File file = H5File::open_read(path);
  const std::vector<double> d_back = hpt::io::read_vector<double>(file.root(), "d");
  ASSERT_EQ(d_back.size(), d.size());
  for (std::size_t k = 0; k < d.size(); ++k) EXPECT_TRUE(same_bits(d_back[k], d[k]));
  EXPECT_EQ(hpt::io::read_array<std::int64_t>(file.root(), "g/i64", {2, 3, 4}), i64);
  const auto any = hpt::io::read_array_alloc<std::int64_t>(file.root(), "/g/i64");
  EXPECT_EQ(any.shape, (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_EQ(any.values, i64);
  const auto s = hpt::io::read_array_alloc<float>(file.root(), "scalar");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.values, scalar);
  EXPECT_TRUE(hpt::io::read_vector<int>(file.root(), "none").empty());
}

TEST(Hdf5HostArrays, WritingAgainReplacesTheDataset) {
  TempDir dir;
  const std::string path = dir.file("replace.h5");
  H5File file = H5File::create(path);
  hpt::io::write_vector(file.root(), "x", std::vector<double>{1, 2, 3});
  hpt::io::write_array(file.root(), "x", std::vector<int>{4, 5, 6, 7}, {2, 2});
  EXPECT_EQ(hpt::io::read_array<int>(file.root(), "x", {2, 2}), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(file.root().list_datasets(), std::vector<std::string>{"x"});
}

TEST(Hdf5ReadErrors, WrongShapeRankTypeOrMissingNameFileAndDataset) {
  TempDir dir;
  const std::string path = dir.file("model.h5");
  using HostView2 = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  {
    H5File file = H5File::create(path);
    HostView2 w("w", 3, 4);
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 4; ++j) w(i, j) = float(i * 10 + j + 1);
    H5Group model = file.root().create_group("model");
    hpt::io::write_view(model, "w", w);
    hpt::io::write_vector(model, "steps", std::vector<int>{1, 2});
  }
  H5File file = H5File::open_read(path);
  const H5Group model = file.root().open_group("model");

  HostView2 wrong_shape("x", 3, 5);
  expect_input_error([&] { hpt::io::read_view(model, "w", wrong_shape); },
                     {path, "/model/w", "wrong shape", "found float32 array of shape (3, 4)",
                      "expected float32 array of shape (3, 5)"});
  Kokkos::View<float*, Kokkos::LayoutRight, Kokkos::HostSpace> wrong_rank("x", 12);
  expect_input_error([&] { hpt::io::read_view(model, "w", wrong_rank); },
                     {path, "/model/w", "wrong rank", "(3, 4)", "(12)"});
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> wrong_type("x", 3, 4);
  expect_input_error([&] { hpt::io::read_view(model, "w", wrong_type); },
                     {path, "/model/w", "wrong element type", "float32", "float64"});
  Kokkos::View<std::int64_t*, Kokkos::LayoutRight, Kokkos::HostSpace> wrong_int("x", 2);
  expect_input_error([&] { hpt::io::read_view(model, "steps", wrong_int); },
                     {path, "/model/steps", "wrong element type", "int32", "int64"});
  expect_input_error([&] { hpt::io::read_view(model, "b", wrong_shape); },
                     {path, "/model/b", "not found", "float32", "(3, 5)"});
  expect_input_error([&] { hpt::io::read_view_alloc<HostView2>(file.root(), "model/b"); },
                     {path, "/model/b", "not found", "rank-2 float32"});
  expect_input_error(
      [&] { hpt::io::read_view_alloc<Kokkos::View<float***, Kokkos::HostSpace>>(model, "w"); },
      {path, "/model/w", "wrong rank", "rank-3"});
  expect_input_error([&] { hpt::io::read_vector<double>(model, "w"); },
                     {path, "/model/w", "float32", "float64"});
  expect_input_error([&] { hpt::io::read_vector<float>(file.root(), "model"); },
                     {path, "/model", "is not a dataset"});
  // The good read still works after the failures.
  HostView2 right("r", 3, 4);
  hpt::io::read_view(model, "w", right);
  EXPECT_EQ(right(2, 3), 24.0f);
}

}  // namespace
