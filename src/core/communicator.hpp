#pragma once
// The processes of a data-parallel run and the few collectives training needs. Built with MPI
// (HPT_ENABLE_MPI) it is MPI_COMM_WORLD; without, it is one process: rank 0 of 1, and every
// collective leaves the data as it is. Callers never need to know which: there is no #ifdef outside
// the two backend files (communicator_mpi.cpp, communicator_single.cpp).
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/communication_counters.hpp"

namespace hpt {

class Communicator {
 public:
  // Every process of the run (MPI_COMM_WORLD, or this one process).
  static Communicator world();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

  // Every collective is counted under `what` it carries (counters()); one process makes none.
  // In place: data[i] becomes the sum of data[i] over every process.
  void allreduce_sum(double* data, std::size_t n, Traffic what) const;
  void allreduce_sum(float* data, std::size_t n, Traffic what) const;
  void allreduce_sum(std::int64_t* data, std::size_t n, Traffic what) const;
  // In place: data becomes root's data on every process.
  void broadcast(std::int64_t* data, std::size_t n, Traffic what, int root = 0) const;
  // Every process's `mine` (their lengths may differ) one after the other in rank order, on every
  // process. Two collectives: the lengths, then the values.
  std::vector<double> allgather(const std::vector<double>& mine, Traffic what) const;

  // Whether the MPI library takes GPU memory in its collectives (CUDA-aware MPI), as the library
  // itself says at run time; false for one process and for a library that cannot tell.
  bool device_aware() const { return device_aware_; }
  // How collectives of the default memory space's Views travel, in words for the run's summary.
  std::string device_buffers() const {
    if (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                   Kokkos::DefaultExecutionSpace::memory_space>::accessible)
      return "host memory (no GPU buffers)";
    return device_aware_ ? "GPU buffers passed to MPI (the library is CUDA-aware)"
                         : "GPU buffers staged through host memory (the library is not CUDA-aware)";
  }

  // A contiguous View of float or double, summed over every process in place. A View in host
  // memory is reduced where it is; one in GPU memory too where the library is device_aware(),
  // else staged: copied to a host mirror, reduced there, copied back.
  template <class View>
  void allreduce_sum_view(const View& v, Traffic what) const {
    if (size_ == 1) return;
    using Mem = typename View::memory_space;
    if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible || device_aware_) {
      typename View::execution_space().fence();  // every kernel writing v has finished
      return allreduce_sum(v.data(), v.span(), what);
    }
    auto host = Kokkos::create_mirror_view(v);
    Kokkos::deep_copy(host, v);
    allreduce_sum(host.data(), host.span(), what);
    Kokkos::deep_copy(v, host);
  }

  // Every collective of this process so far (shared by the copies of the world communicator).
  const CommunicationCounters& counters() const { return *counters_; }

 private:
  Communicator(int rank, int size, bool device_aware,
               std::shared_ptr<CommunicationCounters> counters)
      : rank_(rank), size_(size), device_aware_(device_aware), counters_(std::move(counters)) {}
  int rank_ = 0, size_ = 1;
  bool device_aware_ = false;
  std::shared_ptr<CommunicationCounters> counters_;  // shared by the copies of one communicator
};

// The message-passing library this binary was built with, for --version: "off" or "on (<library>)".
std::string message_passing_description();

// This process's place on its host (MPI_COMM_TYPE_SHARED): its rank among the processes there and
// the lowest rank of them, which names the host. {0, 0} on one process. Collective: every process
// calls it; its collectives are made once, at start, and not counted.
struct HostRank {
  int local_rank = 0;
  int host = 0;
};
HostRank host_rank();

}  // namespace hpt
