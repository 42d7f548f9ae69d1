#pragma once
// The second way to run the recurrences of the RSSM's truncated BPTT (kernels/rssm_bptt.hpp): one
// member's step split across teams, each a block of kBpttSplitUnits units, with one launch per
// sample and phase (a launch boundary is the only grid-wide order Kokkos gives on every backend,
// so teams that run one after another cannot deadlock). The one-team sweep puts E teams on the
// device; this one E * ceil(H / kBpttSplitUnits), at the price of a launch per sample.
#include <Kokkos_Core.hpp>

#include "core/launcher.hpp"
#include "kernels/gru_step.hpp"

namespace hpt {

// How the BPTT runs its recurrences: by the rule below, one team per member, or split.
enum class BpttRecurrence { Auto, Team, Split };

// GRU units of a member's layer per team of the split recurrence (one vector group each).
constexpr int kBpttSplitUnits = 8;

// The smallest hidden size the rule splits on a GPU
// (docs/notes/bptt-split-recurrence-2026-11-29.md).
constexpr int kBpttSplitMinHidden = 64;

// Whether the BPTT of E members of width H splits its recurrences. Auto: on a backend with vector
// lanes (a GPU), from H = kBpttSplitMinHidden, where one team per member leaves most of the
// device idle; never on the host backends, whose few threads one team per member already fills.
template <class Space>
bool bptt_uses_split(const BpttRecurrence choice, const int hidden) {
  if (choice != BpttRecurrence::Auto) return choice == BpttRecurrence::Split;
  return detail::team_vector_length<Space>() > 1 && hidden >= kBpttSplitMinHidden;
}

namespace detail {

// League of `league` teams of kBpttSplitUnits vector groups on a GPU, Kokkos' choice on the host,
// with the functor passed as a kernel argument: Kokkos 3.4 passes one of 512 bytes or more (these
// capture the workspace) through constant memory and first waits for the previous such launch.
template <class Space>
auto bptt_split_policy(const Space& space, const int league) {
  using Policy = Kokkos::TeamPolicy<Space>;
  const int vector = team_vector_length<Space>();
  const Policy policy = vector > 1 ? Policy(space, league, kBpttSplitUnits, vector)
                                   : Policy(space, league, Kokkos::AUTO, vector);
  return Kokkos::Experimental::require(policy,
                                       Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

// body(team, m, t) with one team for every member m < members and sample t < steps (the samples'
// prior and head, which read the recurrence's states but feed nothing back into it).
template <class Space, class Body>
HPT_LAUNCHER void for_each_member_sample(const Space& space, const char* label, const int members,
                                         const int steps, const Body& body) {
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  if (steps < 1) return;
  Kokkos::parallel_for(
      label, bptt_split_policy(space, members * steps), KOKKOS_LAMBDA(const Member& team) {
        body(team, team.league_rank() / steps, team.league_rank() % steps);
      });
}

// Blocks of kBpttSplitUnits units in a layer of H.
inline int bptt_split_blocks(const int hidden) {
  return (hidden + kBpttSplitUnits - 1) / kBpttSplitUnits;
}

}  // namespace detail
}  // namespace hpt
