// The register reduction and the update-and-reduce launcher (kernels/register_reduce.hpp) against
// host loops: sums of integers are exact in double, so every element must be counted once whatever
// the slicing. The sizes put
// several elements into each work item (more than the space's concurrency, not a multiple of it)
// as well as fewer elements than work items, and none.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <vector>

#include "kernels/register_reduce.hpp"
#include "kernels/sum_array.hpp"
#include "test_support.hpp"

namespace {

template <class Space>
class RegisterReduce : public ::testing::Test {};
TYPED_TEST_SUITE(RegisterReduce, hpt::test::Backends, hpt::test::TypedTestNames);

using Sums = hpt::SumArray<3>;

// [0] count, [1] sum of k mod 1000, [2] sum of (k mod 7) * (k mod 11): each element's own terms.
Sums host_sums(std::int64_t n) {
  Sums s;
  for (std::int64_t k = 0; k < n; ++k) {
    s.v[0] += 1.0;
    s.v[1] += double(k % 1000);
    s.v[2] += double((k % 7) * (k % 11));
  }
  return s;
}

template <class View>
Sums read_back(const View& out) {
  Sums got;
  Kokkos::deep_copy(got, out);
  return got;
}

// The same sums through reduce_in_registers on Space (outside the test body: nvcc's extended
// lambdas may not live in a private member function).
template <class Space>
Sums device_sums(std::int64_t n) {
  using Mem = typename Space::memory_space;
  Kokkos::View<Sums, Mem> out("sums");
  hpt::reduce_in_registers(
      Space(), "test::register_reduce", n,
      KOKKOS_LAMBDA(const std::int64_t k, Sums& acc) {
        acc.v[0] += 1.0;
        acc.v[1] += double(k % 1000);
        acc.v[2] += double((k % 7) * (k % 11));
      },
      Kokkos::Sum<Sums, Mem>(out));
  return read_back(out);
}

TYPED_TEST(RegisterReduce, EveryElementCountedOnce) {
  using Space = TypeParam;
  const std::int64_t threads = std::int64_t(Space().concurrency());
  for (const std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(5), threads - 1,
                               3 * threads + 7, 8 * threads + 13, 64 * threads + 1}) {
    const Sums got = device_sums<Space>(n);
    const Sums want = host_sums(n);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(got.v[i], want.v[i]) << "n = " << n << ", sum " << i;
  }
}

// update_and_reduce with a term that sums x and increments it: the sums must see the state before
// the update, and each element must be written exactly once, on every backend (two passes on a
// device, one on the host). Returns the sums; x is updated in place.
template <class Space>
Sums increment_and_sum(const Kokkos::View<double*, typename Space::memory_space>& x) {
  using Mem = typename Space::memory_space;
  Kokkos::View<Sums, Mem> out("sums");
  hpt::update_and_reduce(
      Space(), "test::update_and_reduce", std::int64_t(x.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t k, Sums& acc, const bool write) {
        const double old = x(k);
        acc.v[0] += 1.0;
        acc.v[1] += old;
        acc.v[2] += old * old;
        if (write) x(k) = old + 1.0;
      },
      Kokkos::Sum<Sums, Mem>(out));
  return read_back(out);
}

TYPED_TEST(RegisterReduce, UpdateAndReduceSumsTheStateBeforeTheUpdateAndWritesOnce) {
  using Space = TypeParam;
  const std::int64_t threads = std::int64_t(Space().concurrency());
  for (const std::int64_t n : {std::int64_t(1), 3 * threads + 7}) {
    Kokkos::View<double*, typename Space::memory_space> x("x", n);
    auto h = Kokkos::create_mirror_view(x);
    Sums want;
    for (std::int64_t k = 0; k < n; ++k) {
      h(k) = double(k % 97);
      want.v[0] += 1.0, want.v[1] += h(k), want.v[2] += h(k) * h(k);
    }
    Kokkos::deep_copy(x, h);
    const Sums got = increment_and_sum<Space>(x);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(got.v[i], want.v[i]) << "n = " << n << ", sum " << i;
    Kokkos::deep_copy(h, x);
    for (std::int64_t k = 0; k < n; ++k) ASSERT_EQ(h(k), double(k % 97) + 1.0) << "x(" << k << ")";
  }
}

}  // namespace
