#pragma once
// The processes of one `ssgd sweep`: alone, or the ranks of
// `mpirun -np N ssgd sweep ...` sharing the points (docs/sweep.md).
//
// Under mpirun rank 0 hands the points out one at a time, to every other rank
// as it asks for work and to a thread of its own (dynamic work sharing: points
// differ in cost), and receives every result; the other ranks only replay.
// Waiting is done by polling with short sleeps, so an idle rank leaves its
// core to the others (Open MPI's blocking calls spin).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ssgd::tools {

class SweepRanks {
 public:
  // Starts MPI when ssgd runs under mpirun (or another launcher that sets
  // OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK) with more than one rank.
  // Throws InputError when it does and this ssgd was built without MPI.
  SweepRanks();
  ~SweepRanks();
  SweepRanks(const SweepRanks&) = delete;
  SweepRanks& operator=(const SweepRanks&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

  // Every rank's `ok`, by rank; every rank must call it.
  std::vector<bool> gather_ok(bool ok);

  // Ends this rank with `status` (MPI finalized first), printing nothing.
  [[noreturn]] void exit_quietly(int status);

  // Ends every rank at once after a failure only rank 0 saw mid-run.
  [[noreturn]] void abort(int status);

  // Runs each point of `todo` once, over every rank. `run` gives a point's
  // result; rank 0 calls `done` with each, on the calling thread, in the order
  // they finish. On other ranks, returns when rank 0 has no more work.
  void share(const std::vector<std::int64_t>& todo,
             const std::function<std::string(std::int64_t)>& run,
             const std::function<void(std::int64_t, const std::string&)>& done);

 private:
  int rank_ = 0;
  int size_ = 1;
  bool mpi_ = false;
};

}  // namespace ssgd::tools
