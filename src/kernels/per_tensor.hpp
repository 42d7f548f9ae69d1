#pragma once
// Per-tensor work over the flat parameter buffer through its chunk table (a chunk never straddles
// two tensors): a team per chunk, so a large matrix is many teams and a bias one.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/launcher.hpp"
#include "core/types.hpp"
#include "kernels/parameter_store.hpp"

namespace hpt {

// out(t) = sum of term(k) over the elements k of tensor t (out zeroed first; one entry per tensor).
template <class Space, class Term>
HPT_LAUNCHER void reduce_per_tensor(const Space& space, const char* label,
                                    const ChunkTable<typename Space::memory_space>& chunks,
                                    View1<double, typename Space::memory_space> out,
                                    const Term& term) {
  Kokkos::deep_copy(space, out, 0.0);
  if (chunks.count == 0) return;
  auto chunk_tensor = chunks.tensor;
  auto chunk_begin = chunks.begin;
  auto chunk_end = chunks.end;
  using team_policy = Kokkos::TeamPolicy<Space>;
  using member_type = typename team_policy::member_type;
  Kokkos::parallel_for(
      label, team_policy(space, chunks.count, Kokkos::AUTO),
      KOKKOS_LAMBDA(const member_type& team) {
        const int c = team.league_rank();
        double sum = 0.0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, chunk_begin(c), chunk_end(c)),
            [&](const std::int64_t k, double& acc) { acc += term(k); }, sum);
        Kokkos::single(Kokkos::PerTeam(team),
                       [&]() { Kokkos::atomic_add(&out(chunk_tensor(c)), sum); });
      });
}

// Calls body(tensor, k) for every element k of the buffer, with the index of its tensor.
template <class Space, class Body>
HPT_LAUNCHER void for_each_element_per_tensor(
    const Space& space, const char* label, const ChunkTable<typename Space::memory_space>& chunks,
    const Body& body) {
  if (chunks.count == 0) return;
  auto chunk_tensor = chunks.tensor;
  auto chunk_begin = chunks.begin;
  auto chunk_end = chunks.end;
  using team_policy = Kokkos::TeamPolicy<Space>;
  using member_type = typename team_policy::member_type;
  Kokkos::parallel_for(
      label, team_policy(space, chunks.count, Kokkos::AUTO),
      KOKKOS_LAMBDA(const member_type& team) {
        const int c = team.league_rank();
        const int t = chunk_tensor(c);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, chunk_begin(c), chunk_end(c)),
                             [&](const std::int64_t k) { body(t, k); });
      });
}

}  // namespace hpt
