// Data-parallel shards (Dataset::set_shard): the shards of N processes are the contiguous parts of
// the global batch one process draws, in order, across epoch ends, and every process's cursor moves
// by the global batch; a batch that does not split evenly is refused. Also the one-process
// Communicator of a build without MPI: rank 0 of 1, collectives leave the data as it is.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/communicator.hpp"
#include "core/error.hpp"
#include "physics-style-modules/dataset/dataset.hpp"

namespace {

hpt::Dataset small_dataset() {
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> u(-1, 1);
  hpt::RawData d;
  d.rows = 50;  // 40 train rows: batches of 12 cross epoch ends
  d.features = 3;
  d.outputs = 2;
  d.source = "test";
  for (std::int64_t i = 0; i < d.rows * d.features; ++i) d.x.push_back(u(gen));
  for (std::int64_t r = 0; r < d.rows; ++r) d.labels.push_back(int(gen() % 2));
  hpt::DatasetOptions o;
  o.seed = 7;
  return hpt::Dataset("test", d, o);
}

std::vector<int> rows_of(const hpt::MiniBatch& b) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.rows);
  return std::vector<int>(host.data(), host.data() + host.extent(0));
}

}  // namespace

TEST(DatasetShard, ShardsAreTheContiguousPartsOfTheGlobalBatch) {
  constexpr int kBatch = 12;
  for (int ranks : {2, 3, 4}) {
    hpt::Dataset whole = small_dataset();
    std::vector<hpt::Dataset> shards;
    for (int r = 0; r < ranks; ++r) {
      shards.push_back(small_dataset());
      shards.back().set_shard(r, ranks);
    }
    for (int step = 0; step < 10; ++step) {
      const std::vector<int> global = rows_of(whole.next_batch(kBatch));
      std::vector<int> joined;
      for (auto& s : shards) {
        const std::vector<int> part = rows_of(s.next_batch(kBatch));
        ASSERT_EQ(int(part.size()), kBatch / ranks);
        joined.insert(joined.end(), part.begin(), part.end());
        EXPECT_EQ(s.cursor().epoch, whole.cursor().epoch);
        EXPECT_EQ(s.cursor().position, whole.cursor().position);
      }
      ASSERT_EQ(joined, global) << ranks << " ranks, step " << step;
    }
  }
}

TEST(DatasetShard, UnevenSplitIsRefused) {
  hpt::Dataset d = small_dataset();
  d.set_shard(1, 3);
  EXPECT_THROW(d.next_batch(10), hpt::InternalError);
  EXPECT_THROW(d.set_shard(3, 3), hpt::InternalError);
}

TEST(Communicator, OneProcessCollectivesKeepTheData) {
  const hpt::Communicator world = hpt::Communicator::world();
  if (world.size() != 1) GTEST_SKIP() << "running on several processes";
  EXPECT_EQ(world.rank(), 0);
  EXPECT_TRUE(world.is_root());
  std::vector<double> d = {1.5, -2.0};
  std::vector<float> f = {3.0f};
  std::vector<std::int64_t> i = {7, -3};
  world.allreduce_sum(d.data(), d.size(), hpt::Traffic::Loss);
  world.allreduce_sum(f.data(), f.size(), hpt::Traffic::Gradient);
  world.allreduce_sum(i.data(), i.size(), hpt::Traffic::Control);
  world.broadcast(i.data(), i.size(), hpt::Traffic::Control);
  EXPECT_EQ(d, (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(f[0], 3.0f);
  EXPECT_EQ(i, (std::vector<std::int64_t>{7, -3}));
  Kokkos::View<float*> v("v", 3);
  Kokkos::deep_copy(v, 2.0f);
  world.allreduce_sum_view(v, hpt::Traffic::Gradient);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  EXPECT_EQ(host(2), 2.0f);
  // One process makes no collective: nothing is counted.
  EXPECT_EQ(world.counters().total().calls, 0);
  EXPECT_EQ(world.counters().total().bytes, 0);
}
