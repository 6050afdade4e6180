#pragma once
// The OpenMPI communicator. Initialises MPI on construction (thread level MULTIPLE
// requested, so autograd's backward may run collectives from any thread); finalize()
// ends it.

#include <mpi.h>

#include "tessera/dist/communicator.h"

namespace tessera::dist {

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator();
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "mpi"; }

  void all_reduce(at::Tensor& t, ReduceOp op) override;
  at::Tensor all_gather(const at::Tensor& t, const std::vector<int64_t>& counts) override;
  at::Tensor reduce_scatter(const at::Tensor& t, const std::vector<int64_t>& counts) override;
  void broadcast(at::Tensor& t, int root) override;
  std::unique_ptr<PendingExchange> start_neighbour_exchange(const at::Tensor& x,
                                                             const NeighbourPlan& plan) override;
  void barrier() override;
  [[noreturn]] void abort(int code, const std::string& message) override;
  /// The MPI communicator (a duplicate of MPI_COMM_WORLD), for libraries that take one.
  MPI_Comm handle() const { return comm_; }
  /// MPI_Finalize (idempotent); collectives are invalid afterwards.
  void finalize();

  using Communicator::all_gather;
  using Communicator::reduce_scatter;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate of MPI_COMM_WORLD: our traffic only
  int rank_ = 0;
  int size_ = 1;
};

/// A duplicate of `comm`'s MPI communicator for a library (hypre, MUMPS), so that its
/// messages never meet tessera's. A one-rank communicator that is not MPI's gets a duplicate
/// of MPI_COMM_SELF (MPI initialised as a singleton first when needed, like dist::world());
/// several ranks without MPI are refused, naming `library`.
MPI_Comm duplicate_for_library(const Communicator& comm, const std::string& library);

/// True once MPI_Finalize has run: a library object that outlives MPI must not free its
/// communicator (the process is ending anyway).
bool mpi_finalized();

}  // namespace tessera::dist
