#pragma once
// ReluNet: a chain network x -> affine -> ReLU -> ... -> affine, as explicit float64 weight
// matrices, extracted from a Graph by probing the affine segments between its ReLUs.
// Branch and bound works on this form, batched over domains. Its weight matrices live in a
// parameter store: whole, or sharded by rows over ranks (FSDP: each use gathers).

#include <ATen/core/Tensor.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/lirpa/graph.h"
#include "tessera/lirpa/param_store.h"

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa::detail {

/// The weight matrices W[0..L-1] of a ReluNet in a ParamStore. Whole by default; after
/// `shard`, each rank keeps a block of rows of every matrix and `operator[]` all-gathers
/// the whole matrix (a collective: every rank must ask in the same order, which branch
/// and bound does, since every rank runs the same passes). Values are bitwise the same.
class LayerWeights {
 public:
  LayerWeights();
  /// W[k] whole, float64 (gathered when sharded; the caller's handle is the only copy).
  at::Tensor operator[](size_t k) const;
  at::Tensor back() const { return (*this)[size() - 1]; }
  size_t size() const { return shapes_.size(); }
  bool empty() const { return shapes_.empty(); }
  void push_back(const at::Tensor& w);
  int64_t rows(size_t k) const { return shapes_[k][0]; }
  int64_t cols(size_t k) const { return shapes_[k][1]; }
  /// From now on keep only this rank's rows of each matrix (also those pushed later).
  void shard(std::shared_ptr<dist::Communicator> comm);
  /// Bytes of the matrices held on this rank.
  int64_t local_bytes() const;

 private:
  std::shared_ptr<ParamStore> store_;
  std::vector<std::array<int64_t, 2>> shapes_;
};

struct ReluNet {
  /// z_{k+1} = W[k] h_k + b[k]; h_0 = x, h_k = relu(z_k) for 1 <= k < L, output z_L.
  LayerWeights w;             ///< [n_{k+1}, n_k] float64
  std::vector<at::Tensor> b;  ///< [n_{k+1}] float64
  int layers() const { return static_cast<int>(w.size()); }
  int64_t width(int k) const { return k == 0 ? w.cols(0) : w.rows(k - 1); }
  /// Outputs `[N, n_out]` for inputs `[N, n_in]` (float64; differentiable).
  at::Tensor forward(const at::Tensor& x) const;
};

/// True when the ReluNet form of `graph` (a chain) holds about as many entries as the
/// network's weights (at most twice, plus 2^20): dense layers, not convolutions, whose
/// matrices repeat every kernel at every position. Otherwise `why` says how much larger.
bool dense_form_is_compact(const Graph& graph, std::string* why = nullptr);

/// The ReluNet form of `graph`, or nothing (with `why` set) when the graph is not a chain
/// of affine operators and ReLUs. Each segment's affinity is checked on random points.
/// With `comm` (several ranks, every one calling this on the same graph) the weights are
/// sharded as they are read off: one whole matrix at a time is resident.
std::optional<ReluNet> extract_relu_net(const Graph& graph, std::string* why = nullptr,
                                        std::shared_ptr<dist::Communicator> comm = nullptr);

}  // namespace tessera::lirpa::detail
