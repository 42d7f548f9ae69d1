#pragma once
// Names of typed-test instances: the backend and the element type instead of gtest's index, so
// ctest lists GruStep/OpenMP_float rather than GruStep/0. Pass hpt::test::TypedTestNames as the
// third argument of TYPED_TEST_SUITE.
#include <cstdint>
#include <string>
#include <type_traits>

namespace hpt::test {

template <class T>
std::string element_type_name() {
  if constexpr (std::is_same<T, float>::value) {
    return "float";
  } else if constexpr (std::is_same<T, double>::value) {
    return "double";
  } else if constexpr (std::is_same<T, int>::value) {
    return "int";
  } else {
    static_assert(std::is_same<T, std::int64_t>::value, "add the element type's name here");
    return "int64";
  }
}

// A plain execution space (hpt::test::Backends): its Kokkos name.
template <class Space>
std::string typed_test_name(const Space*) {
  return Space::name();
}

// A case of two parameters, an execution space and an element type (hpt::test::Case and the like).
template <template <class, class> class CaseOf, class Space, class T>
std::string typed_test_name(const CaseOf<Space, T>*) {
  return std::string(Space::name()) + "_" + element_type_name<T>();
}

struct TypedTestNames {
  template <class T>
  static std::string GetName(int) {
    return typed_test_name(static_cast<const T*>(nullptr));
  }
};

}  // namespace hpt::test
