#pragma once
/// @file sharded_param_store.h
/// FSDP and tensor parallelism for bound propagation: every rank keeps 1/P of each
/// parameter tensor.
///
/// A tensor is viewed as a matrix [d0, rest] (a scalar as [1, 1]) and its rows are cut into
/// P contiguous blocks of ceil(d0 / P) rows (the last blocks may be shorter or empty); rank r
/// keeps block r. `get` all-gathers
/// the blocks, so it is a collective: every rank must call it in the same order (bound
/// propagation does, since every rank runs the same passes). Nothing gathered is cached:
/// the full tensor lives only as long as the caller holds the returned handle, so an
/// operator that uses its weight in a local variable has at most one full weight resident.
/// One exception keeps memory from growing under autograd: while a gathered tensor is
/// still alive because someone else holds it (alpha-CROWN's tape saves the weights it
/// multiplied by), `get` hands out that same tensor instead of gathering a second copy. The
/// store itself only keeps a weak reference, so it never extends a lifetime; since every
/// rank runs the same passes, the tensors die at the same points everywhere and the ranks
/// stay in step. Gathering only concatenates, so every value, and every bound computed from it, is
/// bitwise the value of the single-process run. A Linear operator asks for products with
/// its weight instead (`times`, `times_transposed`, see param_store.h):
///
/// - FSDP (`ShardMode::Fsdp`, `FsdpState`): the products gather one block of
///   `weight_block_bytes()` of the weight at a time;
/// - tensor parallelism (`ShardMode::Tp`): a weight W [k, n] never moves. Rank r holds the
///   rows I_r of W and multiplies by them: x W = sum_r x[.., I_r] W[I_r, :] (each rank's
///   partial product gathered and summed in rank order on every rank, so the ranks hold
///   bitwise equal results) and A W^T = [A W[I_1, :]^T, ..., A W[I_P, :]^T] (an all-gather
///   of column blocks). What moves is the size of the activations or A matrices, not of the
///   weight, and each rank does 1/P of the arithmetic. Vectors (biases) are kept whole on
///   every rank; tensors of higher rank (convolution kernels) are split and gathered on use
///   as under FSDP. The sums run in another order than one process's, so bounds match the
///   single-process ones up to rounding (not bitwise), and every rank runs the same passes
///   on the same values: branch and bound, beta and the attack work as under FSDP.
///
/// @code
///   Graph g = load_onnx("net.onnx");                       // every rank loads the model
///   shard_parameters(g, tessera::dist::world());          // keep 1/P of each tensor
///   BoundsResult r = compute_bounds(g, lo, hi, options);   // same on every rank
///   shard_parameters(h, tessera::dist::world(), ShardMode::Tp);  // or tensor-parallel
/// @endcode

#include <ATen/core/Tensor.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/lirpa/param_store.h"

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa {

class Graph;

/// How a run distributes the network over ranks (`--shard`): whole everywhere, FSDP,
/// tensor parallelism (products with each rank's rows of the weights, above), or FSDP plus the optimisation state (the rows
/// of every backward pass, with their A matrices and alpha/beta slopes, and branch and
/// bound's domains) split across ranks.
/// `TpHeads`: tensor parallelism by heads, which splits the network's attention and MLP blocks
/// when it is loaded (model_io.h, load_onnx_shares) rather than its parameter store.
enum class ShardMode { None, Fsdp, Tp, FsdpState, TpHeads };

/// "none", "fsdp", "tp", "fsdp+state", "tp-heads" <-> ShardMode; throws InvalidInput for other names.
ShardMode parse_shard_mode(const std::string& name);
std::string shard_mode_name(ShardMode mode);

class ShardedParamStore final : public ParamStore {
 public:
  /// `mode`: Fsdp or FsdpState (gathered products) or Tp (tensor-parallel products).
  explicit ShardedParamStore(std::shared_ptr<dist::Communicator> comm, ShardMode mode = ShardMode::Fsdp);

  bool contains(const std::string& key) const override;
  /// Collective: the whole tensor gathered from every rank, converted to `dtype`.
  at::Tensor get(const std::string& key, at::ScalarType dtype) const override;
  /// Collective: the whole tensor in its stored dtype.
  at::Tensor get_raw(const std::string& key) const override;
  /// Keeps this rank's block of `value` (the same whole tensor must be put on every rank).
  void put(const std::string& key, at::Tensor value) override;
  std::vector<std::string> keys() const override;
  std::vector<int64_t> shape(const std::string& key) const override;
  /// Collective: columns [c0, c0 + n), gathered from every rank's rows (never the whole).
  at::Tensor get_columns(const std::string& key, at::ScalarType dtype, int64_t c0, int64_t n) const override;
  /// Collective: rows [r0, r0 + n), gathered from the ranks that hold them.
  at::Tensor get_rows(const std::string& key, at::ScalarType dtype, int64_t r0, int64_t n) const override;
  /// Collective. FSDP: the blocked products of ParamStore. TP: x W from each rank's rows.
  std::vector<at::Tensor> times(const std::string& key, at::ScalarType dtype,
                                const std::vector<WeightOperand>& operands) const override;
  /// Collective. FSDP: the blocked product of ParamStore. TP: A W^T by column blocks.
  at::Tensor times_transposed(const std::string& key, at::ScalarType dtype, const at::Tensor& a) const override;
  /// True for tensor-parallel products (ShardMode::Tp).
  bool collective_products() const override { return tensor_parallel_; }

  /// Bytes of the blocks held here.
  int64_t local_bytes() const;
  /// Bytes of the whole tensors (what one process would hold).
  int64_t full_bytes() const;
  /// Number of gathers so far (one per `get`/`get_raw` that found no live copy).
  int64_t gather_count() const { return gathers_.load(); }

  /// Rows per block for a tensor of `rows` leading rows split over `parts` ranks.
  static std::vector<int64_t> block_counts(int64_t rows, int parts);

 private:
  struct Entry {
    at::Tensor block;           ///< this rank's rows [count, rest] (stored dtype)
    std::vector<int64_t> shape; ///< the whole tensor's shape
    std::vector<int64_t> counts;
    bool replicated = false;    ///< dtypes the communicator cannot move stay whole
  };
  const Entry& entry(const std::string& key) const;
  /// True when `e` is a matrix whose products are tensor-parallel.
  bool multiplied_here(const Entry& e) const;
  /// This rank's rows of the matrix `key` in `dtype` (conversions cached: they are 1/P).
  at::Tensor own_rows(const std::string& key, const Entry& e, at::ScalarType dtype) const;
  /// First row of this rank's block.
  int64_t own_first_row(const Entry& e) const;
  /// The gathered tensor of (key, dtype) if something still holds it, else undefined.
  at::Tensor still_alive(const std::string& key, at::ScalarType dtype) const;
  void remember(const std::string& key, const at::Tensor& whole) const;

  std::shared_ptr<dist::Communicator> comm_;
  bool tensor_parallel_ = false;
  std::map<std::string, Entry> values_;
  mutable std::map<std::pair<std::string, int>, at::Tensor> own_converted_;  ///< TP: own rows in other dtypes
  /// weak references only: never keeps a gathered tensor alive
  mutable std::map<std::pair<std::string, int>, c10::weak_intrusive_ptr<c10::StorageImpl>> alive_;
  mutable std::mutex mutex_;
  mutable std::atomic<int64_t> gathers_{0};
};

/// Replaces `graph`'s parameter store by a sharded copy on `comm` (every rank must call it
/// on the same graph; the blocks are cut locally, nothing is communicated), FSDP or (`mode`
/// Tp) tensor-parallel. The old store is released by the graph, so its whole tensors are
/// freed unless the caller holds them.
std::shared_ptr<ShardedParamStore> shard_parameters(Graph& graph, std::shared_ptr<dist::Communicator> comm,
                                                    ShardMode mode = ShardMode::Fsdp);

}  // namespace tessera::lirpa
