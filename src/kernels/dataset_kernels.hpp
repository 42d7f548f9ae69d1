#pragma once
// Device code of the dataset module: the per-epoch shuffle (a keyed bijection of the train rows)
// and the minibatch gather.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/launcher.hpp"
#include "core/rng.hpp"

namespace hpt::dataset {

// Stream of core/rng.hpp keys for the per-epoch shuffle: key(seed, kShuffleStream, epoch).
constexpr std::uint64_t kShuffleStream = 0x73687566666c65ULL;

// Position `i` of a pseudo-random permutation of [0, n) chosen by `key`: a 4-round Feistel network
// over the smallest even number of bits covering n, cycle-walked back into [0, n) (fewer than 4
// passes expected). Integer arithmetic only, so every backend and thread count gives the same
// order, and any position of an epoch is computable on its own (restart needs only (epoch,
// position)).
KOKKOS_INLINE_FUNCTION std::int64_t shuffled_index(std::int64_t i, std::int64_t n,
                                                   std::uint64_t key) {
  int half = 1;
  while ((std::uint64_t(1) << (2 * half)) < std::uint64_t(n)) ++half;
  const std::uint64_t mask = (std::uint64_t(1) << half) - 1;
  std::uint64_t v = std::uint64_t(i);
  do {
    std::uint64_t left = v >> half, right = v & mask;
    for (std::uint64_t round = 0; round < 4; ++round) {
      const std::uint64_t f =
          rng::mix64(right ^ rng::mix64(key + 0x9e3779b97f4a7c15ULL * (round + 1)));
      const std::uint64_t next = left ^ (f & mask);
      left = right;
      right = next;
    }
    v = (left << half) | right;
  } while (v >= std::uint64_t(n));
  return std::int64_t(v);
}

// The train row at `position` of `epoch` for a dataset shuffled with `seed` over n rows.
KOKKOS_INLINE_FUNCTION std::int64_t epoch_row(std::uint64_t seed, std::int64_t epoch,
                                              std::int64_t position, std::int64_t n) {
  return shuffled_index(position, n, rng::key(seed, kShuffleStream, std::uint64_t(epoch)));
}

// Gathers batch rows b = 0..B-1 from the stream of shuffled epochs, starting at (epoch, position)
// and running on into the next epoch(s) when the current one ends: xb(b, :) = x(row, :), and
// likewise the labels and targets (either may be empty); rows(b) = row. One team per batch row.
template <class Space, class Real>
HPT_LAUNCHER void gather_batch(
    const Space& space, std::uint64_t seed, std::int64_t epoch, std::int64_t position,
    const Kokkos::View<const Real**, Kokkos::LayoutRight, typename Space::memory_space>& x,
    const Kokkos::View<const int*, Kokkos::LayoutRight, typename Space::memory_space>& labels,
    const Kokkos::View<const Real**, Kokkos::LayoutRight, typename Space::memory_space>& targets,
    const Kokkos::View<Real**, Kokkos::LayoutRight, typename Space::memory_space>& xb,
    const Kokkos::View<int*, Kokkos::LayoutRight, typename Space::memory_space>& labels_b,
    const Kokkos::View<Real**, Kokkos::LayoutRight, typename Space::memory_space>& targets_b,
    const Kokkos::View<int*, Kokkos::LayoutRight, typename Space::memory_space>& rows) {
  using Policy = Kokkos::TeamPolicy<Space>;
  const std::int64_t n = std::int64_t(x.extent(0));
  const int features = int(x.extent(1));
  const int outputs = int(targets_b.extent(1));
  const bool has_labels = labels_b.extent(0) > 0;
  const int batch = int(xb.extent(0));
  Kokkos::parallel_for(
      "hpt::dataset_gather_batch", Policy(space, batch, Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const int b = team.league_rank();
        const std::int64_t stream = position + b;
        const std::int64_t row = epoch_row(seed, epoch + stream / n, stream % n, n);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, features),
                             [&](const int f) { xb(b, f) = x(row, f); });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, outputs),
                             [&](const int k) { targets_b(b, k) = targets(row, k); });
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          rows(b) = int(row);
          if (has_labels) labels_b(b) = labels(row);
        });
      });
}

}  // namespace hpt::dataset
