// The GRU cell's recurrent sums (kernels/gru_cell.hpp, recurrent_sums) against a host loop on
// every backend and precision. Weights and h are small integers, so every sum is exact in float
// whatever its order: the Quad reads (aligned rows, H a multiple of four) and the
// one-value-per-lane reads (rows one value off alignment, or H not a multiple of four) must both
// give the host's sums exactly, and the sums past Count must stay 0.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <vector>

#include "kernels/gru_cell.hpp"
#include "kernels/gru_step.hpp"
#include "test_support.hpp"

namespace {

template <class T>
class GruRecurrentSums : public ::testing::Test {};
TYPED_TEST_SUITE(GruRecurrentSums, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

// Three rows of H weights starting `offset` values into one allocation (row r at offset + r * H),
// and h; values in [-4, 4] and [-3, 3].
struct Rows {
  int H, offset;
  std::vector<double> w, h;
  Rows(int H_, int offset_) : H(H_), offset(offset_), w(offset_ + 3 * H_), h(H_) {
    for (int k = 0; k < int(w.size()); ++k) w[k] = double((k * 7 + 3) % 9 - 4);
    for (int k = 0; k < H; ++k) h[k] = double((k * 5 + 1) % 7 - 3);
  }
  double host_sum(int r) const {
    double s = 0;
    for (int k = 0; k < H; ++k) s += w[offset + r * H + k] * h[k];
    return s;
  }
};

// recurrent_sums<Count> of the rows on Space by one team thread and its vector lanes, the rows
// marked streamed or not; returns the three sums and whether the Quad reads were chosen.
template <class Space, class Real, int Count>
std::array<double, 4> device_sums(const Rows& rows, const bool streamed) {
  using Mem = typename Space::memory_space;
  Kokkos::View<Real*, Mem> w("w", rows.w.size()), h("h", rows.H);
  auto w_host = Kokkos::create_mirror_view(w);
  auto h_host = Kokkos::create_mirror_view(h);
  for (std::size_t k = 0; k < rows.w.size(); ++k) w_host(k) = Real(rows.w[k]);
  for (int k = 0; k < rows.H; ++k) h_host(k) = Real(rows.h[k]);
  Kokkos::deep_copy(w, w_host);
  Kokkos::deep_copy(h, h_host);
  Kokkos::View<double[4], Mem> out("out");
  const int H = rows.H, offset = rows.offset;
  using Policy = Kokkos::TeamPolicy<Space>;
  Kokkos::parallel_for(
      "test::recurrent_sums", Policy(Space(), 1, 1, hpt::detail::team_vector_length<Space>()),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const hpt::detail::WeightRow<Real> ra{nullptr, w.data() + offset, streamed};
        const hpt::detail::WeightRow<Real> rb{nullptr, w.data() + offset + H, streamed};
        const hpt::detail::WeightRow<Real> rc{nullptr, w.data() + offset + 2 * H, streamed};
        const auto s = hpt::detail::recurrent_sums<Count>(team, ra, rb, rc, h, H);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          out(0) = double(s.a);
          out(1) = double(s.b);
          out(2) = double(s.c);
          out(3) = hpt::detail::reads_quads<Count>(ra, rb, rc, H) ? 1.0 : 0.0;
        });
      });
  auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  return {got(0), got(1), got(2), got(3)};
}

template <class Space, class Real, int Count>
void check_sums(const Rows& rows, const bool quads_expected) {
  for (const bool streamed : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "H = " << rows.H << ", offset " << rows.offset
                                      << ", Count " << Count << ", streamed " << streamed);
    const auto got = device_sums<Space, Real, Count>(rows, streamed);
    for (int r = 0; r < 3; ++r)
      EXPECT_EQ(got[r], r < Count ? rows.host_sum(r) : 0.0) << "sum " << r;
    EXPECT_EQ(got[3] == 1.0, quads_expected);
  }
}

TYPED_TEST(GruRecurrentSums, QuadAndScalarReadsMatchHostLoop) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  // A Kokkos allocation is aligned far beyond 16 bytes, so offset 0 with H a multiple of four
  // takes the Quad reads; one value off, or H = 62, the one-value reads.
  for (const int H : {64, 1024, 62}) {
    for (const int offset : {0, 1}) {
      const Rows rows(H, offset);
      const bool quads = H % 4 == 0 && offset == 0;
      check_sums<Space, Real, 1>(rows, quads);
      check_sums<Space, Real, 2>(rows, quads);
      check_sums<Space, Real, 3>(rows, quads);
    }
  }
}

}  // namespace
