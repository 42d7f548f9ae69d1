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

namespace hpt {

// What the collectives of a run cost: bytes this process sent and wall seconds spent inside them.
struct CommunicationCounters {
  double bytes_sent = 0;
  double seconds = 0;
  std::int64_t calls = 0;
};

class Communicator {
 public:
  // Every process of the run (MPI_COMM_WORLD, or this one process).
  static Communicator world();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

  // In place: data[i] becomes the sum of data[i] over every process.
  void allreduce_sum(double* data, std::size_t n) const;
  void allreduce_sum(float* data, std::size_t n) const;
  // In place: data becomes root's data on every process.
  void broadcast(double* data, std::size_t n, int root = 0) const;
  void broadcast(std::int64_t* data, std::size_t n, int root = 0) const;
  void barrier() const;

  // A contiguous View of float or double, summed over every process in place. Staged through host
  // memory: copied to a host mirror, reduced there, copied back (no copy where the View already is
  // in host memory). No GPU-aware MPI is used.
  template <class View>
  void allreduce_sum_view(const View& v) const {
    if (size_ == 1) return;
    auto host = Kokkos::create_mirror_view(v);
    Kokkos::deep_copy(host, v);
    allreduce_sum(host.data(), host.span());
    Kokkos::deep_copy(v, host);
  }

  const CommunicationCounters& counters() const { return *counters_; }

 private:
  Communicator(int rank, int size, std::shared_ptr<CommunicationCounters> counters)
      : rank_(rank), size_(size), counters_(std::move(counters)) {}
  int rank_ = 0, size_ = 1;
  std::shared_ptr<CommunicationCounters> counters_;  // shared by the copies of one communicator
};

// The message-passing library this binary was built with, for --version: "off" or "on (<library>)".
std::string message_passing_description();

}  // namespace hpt
