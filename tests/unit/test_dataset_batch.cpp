// Minibatches: the per-epoch shuffle is a permutation, the device gather equals a host gather of
// the same permutation on every backend and precision, epochs are covered exactly, and the batch
// stream restarts exactly from (epoch, position).
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/error.hpp"
#include "physics-style-modules/dataset/dataset.hpp"
#include "kernels/dataset_kernels.hpp"
#include "test_support.hpp"

namespace {

hpt::RawData labelled_rows(std::int64_t rows, int features, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  hpt::RawData d;
  d.rows = rows;
  d.features = features;
  d.outputs = 4;
  d.source = "test";
  for (std::int64_t i = 0; i < rows * features; ++i) d.x.push_back(u(gen));
  for (std::int64_t r = 0; r < rows; ++r) d.labels.push_back(int(gen() % 4));
  return d;
}

hpt::DatasetOptions options(std::uint64_t seed) {
  hpt::DatasetOptions o;
  o.val_fraction = 0.2;
  o.standardize = true;
  o.seed = seed;
  return o;
}

}  // namespace

TEST(DatasetBatch, ShuffleIsAPermutationForEverySize) {
  for (std::int64_t n : {1, 2, 3, 4, 5, 7, 16, 17, 64, 65, 1000, 4097}) {
    for (std::uint64_t key : {0ULL, 1ULL, 0xdeadbeefULL}) {
      std::vector<int> seen(std::size_t(n), 0);
      for (std::int64_t i = 0; i < n; ++i) {
        const auto j = hpt::dataset::shuffled_index(i, n, key);
        ASSERT_GE(j, 0);
        ASSERT_LT(j, n);
        ++seen[std::size_t(j)];
      }
      for (int s : seen) ASSERT_EQ(s, 1) << "n = " << n;
    }
  }
  // Different epochs give different orders, and the order is not the identity.
  std::int64_t same = 0, fixed = 0;
  for (std::int64_t i = 0; i < 1000; ++i) {
    same += hpt::dataset::epoch_row(1, 0, i, 1000) == hpt::dataset::epoch_row(1, 1, i, 1000);
    fixed += hpt::dataset::epoch_row(1, 0, i, 1000) == i;
  }
  EXPECT_LT(same, 20);
  EXPECT_LT(fixed, 20);
}

template <class C>
class DatasetGather : public ::testing::Test {};
TYPED_TEST_SUITE(DatasetGather, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(DatasetGather, MatchesHostGatherOfTheSamePermutation) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int n = 37, f = 5, k = 3, batch = 50;  // the batch runs over two epoch boundaries
  const std::uint64_t seed = 12;
  const std::int64_t epoch = 2, position = 30;

  std::mt19937 gen(4);
  std::uniform_real_distribution<double> u(-2, 2);
  Kokkos::View<Real**, Kokkos::LayoutRight, Mem> x("x", n, f), t("t", n, k), xb("xb", batch, f),
      tb("tb", batch, k);
  Kokkos::View<int*, Kokkos::LayoutRight, Mem> labels("labels", n), lb("lb", batch),
      rows("rows", batch);
  auto hx = Kokkos::create_mirror_view(x);
  auto ht = Kokkos::create_mirror_view(t);
  auto hl = Kokkos::create_mirror_view(labels);
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < f; ++c) hx(r, c) = Real(u(gen));
    for (int c = 0; c < k; ++c) ht(r, c) = Real(u(gen));
    hl(r) = int(gen() % 7);
  }
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(t, ht);
  Kokkos::deep_copy(labels, hl);
  hpt::dataset::gather_batch<Space, Real>(Space(), seed, epoch, position, x, labels, t, xb, lb, tb,
                                          rows);
  const auto hxb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), xb);
  const auto htb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tb);
  const auto hlb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lb);
  const auto hrows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rows);

  // Host gather: walk the stream of epochs by hand.
  std::int64_t e = epoch, p = position;
  for (int b = 0; b < batch; ++b) {
    const auto row = hpt::dataset::epoch_row(seed, e, p, n);
    ASSERT_EQ(hrows(b), row) << "batch row " << b;
    for (int c = 0; c < f; ++c) ASSERT_EQ(hxb(b, c), hx(row, c));
    for (int c = 0; c < k; ++c) ASSERT_EQ(htb(b, c), ht(row, c));
    ASSERT_EQ(hlb(b), hl(row));
    if (++p == n) p = 0, ++e;
  }
}

TEST(DatasetBatch, EachEpochVisitsEveryTrainRowOnce) {
  hpt::Dataset ds("test", labelled_rows(131, 3, 1), options(5));
  const std::int64_t n = ds.train_size();
  const int batch = 16;  // does not divide n: batches straddle epochs
  std::vector<int> stream;
  for (int i = 0; i < 3 * n / batch + 1; ++i) {
    const auto& b = ds.next_batch(batch);
    auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.rows);
    stream.insert(stream.end(), rows.data(), rows.data() + batch);
  }
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::set<int> rows(stream.begin() + epoch * n, stream.begin() + (epoch + 1) * n);
    EXPECT_EQ(std::int64_t(rows.size()), n) << "epoch " << epoch;
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_EQ(stream[std::size_t(epoch * n + i)], ds.shuffled_row(epoch, i));
  }
  const auto c = ds.cursor();
  const std::int64_t consumed = std::int64_t(stream.size());
  EXPECT_EQ(c.epoch, consumed / n);
  EXPECT_EQ(c.position, consumed % n);
}

TEST(DatasetBatch, BatchHoldsTheDeviceRowsOfTheTrainPart) {
  hpt::Dataset ds("test", labelled_rows(90, 4, 2), options(3));
  const auto xt = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ds.x_train());
  const auto lt = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ds.labels_train());
  const auto& b = ds.next_batch(10);
  const auto* data = b.x.data();
  const auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.x);
  const auto l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.labels);
  for (int i = 0; i < 10; ++i) {
    const auto row = ds.shuffled_row(0, i);
    for (int c = 0; c < 4; ++c) ASSERT_EQ(x(i, c), xt(row, c));
    ASSERT_EQ(l(i), lt(row));
  }
  // The same batch size reuses the same Views (no allocation per step).
  EXPECT_EQ(ds.next_batch(10).x.data(), data);
}

TEST(DatasetBatch, RestartFromCursorContinuesTheSameStream) {
  const auto raw = labelled_rows(77, 3, 3);
  hpt::Dataset a("test", raw, options(8)), b("test", raw, options(8));
  const int batch = 9;
  std::vector<std::vector<int>> stream_a;
  hpt::BatchCursor saved;
  for (int i = 0; i < 20; ++i) {
    if (i == 11) saved = a.cursor();
    const auto& batch_a = a.next_batch(batch);
    auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch_a.rows);
    stream_a.emplace_back(rows.data(), rows.data() + batch);
  }
  ASSERT_GT(saved.epoch, 0);  // the restart point lies past the first epoch
  b.set_cursor(saved);
  for (int i = 11; i < 20; ++i) {
    const auto& batch_b = b.next_batch(batch);
    auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch_b.rows);
    ASSERT_EQ(std::vector<int>(rows.data(), rows.data() + batch), stream_a[std::size_t(i)])
        << "batch " << i;
  }
  EXPECT_EQ(a.cursor().epoch, b.cursor().epoch);
  EXPECT_EQ(a.cursor().position, b.cursor().position);
}

TEST(DatasetBatch, CursorOutOfRangeIsAnInputError) {
  hpt::Dataset ds("test", labelled_rows(20, 2, 4), options(1));
  EXPECT_THROW(ds.set_cursor({0, ds.train_size()}), hpt::InputError);
  EXPECT_THROW(ds.set_cursor({-1, 0}), hpt::InputError);
  EXPECT_NO_THROW(ds.set_cursor({3, ds.train_size() - 1}));
}
