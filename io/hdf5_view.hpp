#pragma once
// Kokkos Views (rank 1-4, any memory space) and host vectors to and from whole HDF5 datasets.
// Element types: float, double, int, std::int64_t; the HDF5 type follows the value_type. Views go
// through a host mirror + deep_copy (no copy when the View is host-accessible).
//
// Reads check the stored element type, rank and shape and throw hpt::InputError naming the file,
// the dataset, what was found and what was expected ("file 'm.h5': dataset '/model/w' has the wrong
// shape: found float32 array of shape (3, 5), expected float32 array of shape (3, 4)").
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "io/hdf5_file.hpp"

namespace hpt::io {

namespace detail {

template <class ViewType>
constexpr std::size_t view_rank() {
  return static_cast<std::size_t>(ViewType::traits::rank);
}

// HDF5 stores row-major: LayoutRight (or a rank-1 LayoutLeft, the same thing).
template <class ViewType>
constexpr void check_storable_view() {
  static_assert(Kokkos::is_view<ViewType>::value, "expected a Kokkos::View");
  static_assert(view_rank<ViewType>() >= 1 && view_rank<ViewType>() <= 4,
                "HDF5 I/O takes Views of rank 1 to 4");
  using layout = typename ViewType::array_layout;
  static_assert(std::is_same<layout, Kokkos::LayoutRight>::value ||
                    (view_rank<ViewType>() == 1 && std::is_same<layout, Kokkos::LayoutLeft>::value),
                "HDF5 I/O takes LayoutRight Views (row-major, as stored)");
}

template <class ViewType>
std::vector<std::size_t> view_shape(const ViewType& view) {
  std::vector<std::size_t> shape(view_rank<ViewType>());
  for (std::size_t r = 0; r < shape.size(); ++r) shape[r] = view.extent(r);
  return shape;
}

inline std::size_t element_count(const std::vector<std::size_t>& shape) {
  std::size_t n = 1;
  for (const std::size_t d : shape) n *= d;
  return n;
}

template <class ViewType>
ViewType allocate_view(const std::string& label, const std::vector<std::size_t>& s) {
  static_assert(static_cast<std::size_t>(ViewType::traits::rank_dynamic) == view_rank<ViewType>(),
                "read_view_alloc needs a View with only run-time extents (e.g. double**)");
  const auto alloc = Kokkos::view_alloc(Kokkos::WithoutInitializing, label);
  if constexpr (view_rank<ViewType>() == 1) {
    return ViewType(alloc, s[0]);
  } else if constexpr (view_rank<ViewType>() == 2) {
    return ViewType(alloc, s[0], s[1]);
  } else if constexpr (view_rank<ViewType>() == 3) {
    return ViewType(alloc, s[0], s[1], s[2]);
  } else {
    return ViewType(alloc, s[0], s[1], s[2], s[3]);
  }
}

}  // namespace detail

// Writes `view` as dataset `name` (a path relative to `group`; missing parent groups are created, a
// dataset of that name is replaced). Returns the dataset, e.g. to attach attributes.
template <class ViewType>
H5Dataset write_view(H5Group& group, const std::string& name, const ViewType& view) {
  detail::check_storable_view<ViewType>();
  using value_type = typename ViewType::non_const_value_type;
  HPT_REQUIRE(view.span_is_contiguous(), "write_view of a non-contiguous View '" + name + "'");
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
  return group.write_dataset(name, h5_element_of<value_type>, host.data(),
                             detail::view_shape(view));
}

// Reads dataset `name` into the allocated `view`, whose extents must equal the stored shape.
template <class ViewType>
void read_view(const H5Group& group, const std::string& name, const ViewType& view) {
  detail::check_storable_view<ViewType>();
  using value_type = typename ViewType::value_type;
  static_assert(!std::is_const<value_type>::value, "read_view needs a View of non-const values");
  HPT_REQUIRE(view.span_is_contiguous(), "read_view into a non-contiguous View '" + name + "'");
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), view);
  group.read_dataset(name, h5_element_of<value_type>, host.data(), detail::view_shape(view));
  Kokkos::deep_copy(view, host);
}

// Allocates a View of the stored shape (rank and element type must match ViewType) and reads into
// it.
template <class ViewType>
ViewType read_view_alloc(const H5Group& group, const std::string& name,
                         const std::string& label = "") {
  detail::check_storable_view<ViewType>();
  using value_type = typename ViewType::value_type;
  const H5Dataset dataset =
      group.open_dataset_checked(name, h5_element_of<value_type>, detail::view_rank<ViewType>());
  const std::vector<std::size_t> shape = dataset.shape();
  ViewType view = detail::allocate_view<ViewType>(label.empty() ? name : label, shape);
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), view);
  dataset.read(h5_element_of<value_type>, host.data(), shape);
  Kokkos::deep_copy(view, host);
  return view;
}

// Writes the contiguous `view` as a dataset of another shape with as many elements, e.g. a 1-D View
// over a parameter tensor stored as its (rows, cols) matrix.
template <class ViewType>
H5Dataset write_view_as(H5Group& group, const std::string& name, const ViewType& view,
                        const std::vector<std::size_t>& shape) {
  detail::check_storable_view<ViewType>();
  using value_type = typename ViewType::non_const_value_type;
  HPT_REQUIRE(view.span_is_contiguous(), "write_view_as of a non-contiguous View '" + name + "'");
  HPT_REQUIRE(detail::element_count(shape) == view.size(),
              "write_view_as '" + name + "': shape " + shape_string(shape) + " does not hold " +
                  std::to_string(view.size()) + " elements");
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
  return group.write_dataset(name, h5_element_of<value_type>, host.data(), shape);
}

// Reads a dataset of the given `shape` into the contiguous `view` with as many elements.
template <class ViewType>
void read_view_as(const H5Group& group, const std::string& name, const ViewType& view,
                  const std::vector<std::size_t>& shape) {
  detail::check_storable_view<ViewType>();
  using value_type = typename ViewType::value_type;
  static_assert(!std::is_const<value_type>::value, "read_view_as needs a View of non-const values");
  HPT_REQUIRE(view.span_is_contiguous(), "read_view_as into a non-contiguous View '" + name + "'");
  HPT_REQUIRE(detail::element_count(shape) == view.size(),
              "read_view_as '" + name + "': shape " + shape_string(shape) + " does not hold " +
                  std::to_string(view.size()) + " elements");
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), view);
  group.read_dataset(name, h5_element_of<value_type>, host.data(), shape);
  Kokkos::deep_copy(view, host);
}

// ---- host data ------------------------------------------------------------------------------

// A whole dataset read into host memory: values in row-major order and the stored shape.
template <class T>
struct HostArray {
  std::vector<T> values;
  std::vector<std::size_t> shape;
};

// Writes `values` as a 1-D dataset.
template <class T>
H5Dataset write_vector(H5Group& group, const std::string& name, const std::vector<T>& values) {
  return group.write_dataset(name, h5_element_of<T>, values.data(),
                             std::vector<std::size_t>{values.size()});
}

// Writes `values` (row-major) as a dataset of `shape`; {} writes a scalar dataset of one value.
template <class T>
H5Dataset write_array(H5Group& group, const std::string& name, const std::vector<T>& values,
                      const std::vector<std::size_t>& shape) {
  HPT_REQUIRE(detail::element_count(shape) == values.size(),
              "write_array '" + name + "': shape " + shape_string(shape) + " does not hold " +
                  std::to_string(values.size()) + " values");
  return group.write_dataset(name, h5_element_of<T>, values.data(), shape);
}

// Reads a 1-D dataset of any length.
template <class T>
std::vector<T> read_vector(const H5Group& group, const std::string& name) {
  const H5Dataset dataset = group.open_dataset_checked(name, h5_element_of<T>, 1);
  std::vector<T> values(dataset.shape()[0]);
  dataset.read(h5_element_of<T>, values.data(), std::vector<std::size_t>{values.size()});
  return values;
}

// Reads a dataset that must have `expected_shape`.
template <class T>
std::vector<T> read_array(const H5Group& group, const std::string& name,
                          const std::vector<std::size_t>& expected_shape) {
  std::vector<T> values(detail::element_count(expected_shape));
  group.read_dataset(name, h5_element_of<T>, values.data(), expected_shape);
  return values;
}

// Reads a dataset of any rank and shape (element type must be T's).
template <class T>
HostArray<T> read_array_alloc(const H5Group& group, const std::string& name) {
  const H5Dataset dataset = group.open_dataset(name);
  dataset.check_element(h5_element_of<T>);
  HostArray<T> array;
  array.shape = dataset.shape();
  array.values.resize(detail::element_count(array.shape));
  dataset.read(h5_element_of<T>, array.values.data(), array.shape);
  return array;
}

}  // namespace hpt::io
