// The MPI backend of Communicator and ParallelSession (built with HPT_ENABLE_MPI): MPI_COMM_WORLD,
// with errors returned to the caller and turned into one InternalError naming the call.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_Query_cuda_support
#endif

#include <cstdint>
#include <limits>
#include <vector>

#include "core/communicator.hpp"
#include "core/error.hpp"
#include "core/parallel_session.hpp"

namespace hpt {

namespace {

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw InternalError(std::string("MPI: ") + call + " failed: " + std::string(text, length));
}

int count_of(std::size_t n) {
  HPT_REQUIRE(n <= std::size_t(std::numeric_limits<int>::max()),
              "a collective over more than 2^31 - 1 elements");
  return int(n);
}

// Whether the library says, at run time, that it takes CUDA memory (Open MPI built with CUDA).
bool library_device_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

bool mpi_running() {
  int started = 0, ended = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&ended);
  return started && !ended;
}

template <class T>
MPI_Datatype datatype_of();
template <>
MPI_Datatype datatype_of<double>() {
  return MPI_DOUBLE;
}
template <>
MPI_Datatype datatype_of<float>() {
  return MPI_FLOAT;
}
template <>
MPI_Datatype datatype_of<std::int64_t>() {
  return MPI_INT64_T;
}

// Times one collective of n elements of T and counts it into `c`: one call, its payload in bytes.
template <class T, class Call>
void timed(CollectiveCount& c, std::size_t n, Call&& call) {
  const double start = MPI_Wtime();
  call();
  c.seconds += MPI_Wtime() - start;
  c.bytes += std::int64_t(n * sizeof(T));
  ++c.calls;
}

template <class T>
void allreduce(CommunicationCounters& counters, Traffic what, T* data, std::size_t n) {
  timed<T>(counters[what], n, [&] {
    check(MPI_Allreduce(MPI_IN_PLACE, data, count_of(n), datatype_of<T>(), MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
  });
}

}  // namespace

Communicator Communicator::world() {
  static const auto counters = std::make_shared<CommunicationCounters>();
  int rank = 0, size = 1;
  if (mpi_running()) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  return Communicator(rank, size, size > 1 && library_device_aware(), counters);
}

void Communicator::allreduce_sum(double* data, std::size_t n, Traffic what) const {
  if (size_ > 1 && n > 0) allreduce(*counters_, what, data, n);
}

void Communicator::allreduce_sum(float* data, std::size_t n, Traffic what) const {
  if (size_ > 1 && n > 0) allreduce(*counters_, what, data, n);
}

void Communicator::allreduce_sum(std::int64_t* data, std::size_t n, Traffic what) const {
  if (size_ > 1 && n > 0) allreduce(*counters_, what, data, n);
}

void Communicator::broadcast(std::int64_t* data, std::size_t n, Traffic what, int root) const {
  if (size_ == 1 || n == 0) return;
  timed<std::int64_t>((*counters_)[what], n, [&] {
    check(MPI_Bcast(data, count_of(n), MPI_INT64_T, root, MPI_COMM_WORLD), "MPI_Bcast");
  });
}

std::vector<double> Communicator::allgather(const std::vector<double>& mine, Traffic what) const {
  if (size_ == 1) return mine;
  const int n = count_of(mine.size());
  std::vector<int> counts(std::size_t(size_), 0), offsets(std::size_t(size_), 0);
  timed<int>((*counters_)[what], counts.size(), [&] {
    check(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD),
          "MPI_Allgather");
  });
  std::size_t total = 0;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    offsets[p] = count_of(total);
    total += std::size_t(counts[p]);
  }
  std::vector<double> all(total);
  timed<double>((*counters_)[what], total, [&] {
    check(MPI_Allgatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), offsets.data(),
                         MPI_DOUBLE, MPI_COMM_WORLD),
          "MPI_Allgatherv");
  });
  return all;
}

std::string message_passing_description() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string library(text, std::size_t(length));
  library = library.substr(0, library.find_first_of(",\n"));  // the first line's name and version
  return "on (" + library + ")";
}

HostRank host_rank() {
  HostRank place;
  if (Communicator::world().size() == 1) return place;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm host = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host),
        "MPI_Comm_split_type");
  const int local = MPI_Comm_rank(host, &place.local_rank);
  const int lowest = MPI_Allreduce(&rank, &place.host, 1, MPI_INT, MPI_MIN, host);
  MPI_Comm_free(&host);
  check(local, "MPI_Comm_rank");
  check(lowest, "MPI_Allreduce");
  return place;
}

ParallelSession::ParallelSession(int& argc, char**& argv) {
  check(MPI_Init(&argc, &argv), "MPI_Init");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

ParallelSession::~ParallelSession() {
  if (mpi_running()) MPI_Finalize();
}

void ParallelSession::abort_all(int code) {
  if (Communicator::world().size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
}

}  // namespace hpt
