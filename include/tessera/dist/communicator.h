#pragma once
/// @file communicator.h
/// One communicator interface for single-process and MPI runs.
///
/// All operations work on contiguous CPU tensors of float32, float64, int32 or int64 and
/// act along dimension 0 (rows); trailing dimensions must agree across ranks.
///
/// @code
///   auto comm = tessera::dist::make_communicator();   // MPI under mpirun, else self
///   at::Tensor total = x.clone();
///   comm->all_reduce(total, tessera::dist::ReduceOp::Sum);
///   at::Tensor everyone = comm->all_gather(local_rows);  // unequal row counts are fine
/// @endcode

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera::dist {

enum class ReduceOp { Sum, Max, Min };

/// The neighbours of one rank in a sparse (halo) exchange.
/// `send_index[i]` (int64, 1-D) lists the rows of the local tensor sent to `peers[i]`;
/// `recv_rows[i]` rows arrive from `peers[i]`. Both sides must agree on the counts.
struct NeighbourPlan {
  std::vector<int> peers;
  std::vector<at::Tensor> send_index;
  std::vector<int64_t> recv_rows;
};

/// A neighbour exchange in flight; `wait()` returns one received tensor per peer.
class PendingExchange {
 public:
  virtual ~PendingExchange() = default;
  virtual std::vector<at::Tensor> wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "self" or "mpi".
  virtual std::string kind() const = 0;

  /// In place: `t` becomes the element-wise reduction of every rank's `t`.
  virtual void all_reduce(at::Tensor& t, ReduceOp op) = 0;

  /// Concatenation along dim 0 of every rank's `t` in rank order; `counts[r]` is the
  /// number of rows of rank r.
  virtual at::Tensor all_gather(const at::Tensor& t, const std::vector<int64_t>& counts) = 0;
  /// Same, learning the row counts first (one extra small collective).
  at::Tensor all_gather(const at::Tensor& t);

  /// Sum over ranks of `t` (rows sum(counts)), each rank keeping its block of `counts[rank]`
  /// rows. The transpose of `all_gather`.
  virtual at::Tensor reduce_scatter(const at::Tensor& t, const std::vector<int64_t>& counts) = 0;
  /// Same with equal blocks; `t.size(0)` must be divisible by `size()`.
  at::Tensor reduce_scatter(const at::Tensor& t);

  /// In place: every rank's `t` becomes `root`'s `t` (same shape everywhere).
  virtual void broadcast(at::Tensor& t, int root) = 0;

  /// Starts a sparse exchange: sends rows `x[plan.send_index[i]]` to `plan.peers[i]` and
  /// receives `plan.recv_rows[i]` rows from each peer. Local work may overlap until wait().
  virtual std::unique_ptr<PendingExchange> start_neighbour_exchange(const at::Tensor& x,
                                                                     const NeighbourPlan& plan) = 0;
  /// Blocking form of `start_neighbour_exchange`.
  std::vector<at::Tensor> neighbour_exchange(const at::Tensor& x, const NeighbourPlan& plan);

  virtual void barrier() = 0;

  /// Ends every process of the job with `code` after printing `message` (never returns).
  [[noreturn]] virtual void abort(int code, const std::string& message) = 0;

  /// Row counts of every rank for a tensor of `local_rows` rows here.
  std::vector<int64_t> gather_counts(int64_t local_rows);
};

/// Splits `n` rows into `parts` contiguous blocks whose sizes differ by at most one.
std::vector<int64_t> balanced_counts(int64_t n, int parts);

/// MPI when the process was launched by an MPI launcher and MPI is compiled in, else a
/// single-process communicator. The MPI communicator lives until the process exits.
std::shared_ptr<Communicator> make_communicator();

/// The process's world communicator (created on first use by make_communicator()).
std::shared_ptr<Communicator> world();

/// Ends MPI cleanly (idempotent; nothing to do single-process). Every rank of a job that
/// succeeds calls it once before exiting (`run_guarded` does). It is deliberately not
/// run at exit: a rank that calls exit() early must end the job, not wait in finalize.
void finalize();

}  // namespace tessera::dist
