#pragma once
// Starts and ends the message-passing library for the lifetime of main (MPI_Init / MPI_Finalize in
// an MPI build; nothing otherwise). An MPI failure inside a collective is reported as an
// InternalError (exit 1) rather than MPI's default abort.
namespace hpt {

class ParallelSession {
 public:
  ParallelSession(int& argc, char**& argv);
  ~ParallelSession();
  ParallelSession(const ParallelSession&) = delete;
  ParallelSession& operator=(const ParallelSession&) = delete;
  // Ends every process of the run now with `code` (after an error on one process, so the others do
  // not wait in a collective forever). Returns only in a one-process run.
  static void abort_all(int code);
};

}  // namespace hpt
