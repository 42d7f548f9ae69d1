#include "train/data_parallel.hpp"

#include <string>

#include "core/checksum.hpp"
#include "core/error.hpp"
#include "kernels/update_kernels.hpp"

namespace hpt::train {

namespace {

// The number of processes whose digest differs from rank 0's.
int differing_from_root(const std::vector<std::uint64_t>& digests) {
  int n = 0;
  for (const std::uint64_t d : digests) n += d != digests.front();
  return n;
}

}  // namespace

LossValue mean_over_ranks(const Communicator& comm, LossValue shard) {
  if (comm.size() == 1) return shard;
  double sums[2] = {shard.loss, shard.accuracy};
  comm.allreduce_sum(sums, 2, Traffic::Loss);
  return {sums[0] / comm.size(), sums[1] / comm.size()};
}

void average_gradient(const Communicator& comm, const View1<real>& gradient) {
  if (comm.size() == 1) return;
  comm.allreduce_sum_view(gradient, Traffic::Gradient);
  copy_scaled<ExecSpace, real>(ExecSpace(), gradient, gradient, 1.0 / comm.size());
}

int stop_signal_of_root(const Communicator& comm, int own_signal) {
  std::int64_t signal = own_signal;
  comm.broadcast(&signal, 1, Traffic::Control);
  return int(signal);
}

RankDigests check_identical_state(const Communicator& comm, const View1<real>& parameters,
                                  std::uint64_t decisions) {
  const std::size_t n = std::size_t(comm.size()), r = std::size_t(comm.rank());
  // Each process fills its own slots; the sum of one nonzero value per slot is exact.
  std::vector<std::int64_t> slots(2 * n, 0);
  slots[r] = std::int64_t(fnv1a_view(kChecksumStart, parameters));
  slots[n + r] = std::int64_t(decisions);
  comm.allreduce_sum(slots.data(), slots.size(), Traffic::Control);
  RankDigests d;
  d.parameters.assign(slots.begin(), slots.begin() + std::ptrdiff_t(n));
  d.decisions.assign(slots.begin() + std::ptrdiff_t(n), slots.end());
  const int params = differing_from_root(d.parameters), taken = differing_from_root(d.decisions);
  if (params > 0 || taken > 0)
    throw InternalError("data-parallel training: on " + std::to_string(params) + " of " +
                        std::to_string(n) + " processes the parameters, on " +
                        std::to_string(taken) + " the decisions differ from rank 0's");
  return d;
}

}  // namespace hpt::train
