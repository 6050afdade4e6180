#pragma once
/// @file tensor_parallel.h
/// Tensor parallelism for bound propagation on chains of Linear, Conv and ReLU layers.
///
/// Consecutive layers pair up into sharded zones (Megatron style): a column-parallel Linear
/// (rank r keeps the rows of W for its block of output neurons), the ReLU after it, and a
/// row-parallel Linear (rank r keeps the columns of W for the same block of inputs). A Conv
/// splits by channels instead: column-parallel, rank r keeps the kernels and biases of its
/// block of output channels (its output is those channels, a contiguous block of the
/// flattened [C, H, W] neurons); row-parallel, the kernels' slices over its block of input
/// channels. A Linear after Flatten in a zone with a Conv splits its columns by the same
/// channel blocks (all positions of a channel on one rank). The
/// hidden neurons of a zone, their weights, bounds and A matrices live on one rank only;
/// the zone's output is the sum of the ranks' partial products (one all-reduce). A Linear
/// that does not start a zone (the last one of an odd count) is replicated.
///
/// Bounds (IBP, CROWN, alpha-CROWN) are sound for any P. IBP is the single-process IBP up to the order
/// of the sums. CROWN computes every intermediate bound by CROWN back to the network input,
/// as one process does, crossing zones with collectives (rows over replicated neurons:
/// all-reduce of the partial A matrices at each zone input; rows over a rank's own hidden
/// neurons: an all-gather of the rows before the previous zone and a reduce-scatter of the
/// result), so CROWN matches one process up to rounding. `TpOptions::local_intermediate`
/// instead bounds each zone's hidden neurons by IBP over the zone's input box (no
/// communication of A matrices, looser on multi-zone models). alpha-CROWN optimises the
/// lower ReLU slopes (per pass, row and neuron; a column layer's slopes live on the rank of
/// its neurons) by Adam with `AlphaOptions`, in the final pass and in the passes bounding the
/// layers held whole on every rank; the hidden bounds of column layers after the first zone
/// stay TP CROWN's. On one zone (+ a replicated layer) it is the single-process alpha-CROWN
/// up to rounding.
///
/// @code
///   auto comm = tessera::dist::world();
///   TpNetwork net = tp_from_graph(load_onnx("mlp.onnx"), comm);   // Unsupported for other ops
///   BoundsResult r = tp_compute_bounds(net, lo, hi, options);      // same on every rank
///   // or built block by block, never whole on any rank:
///   TpNetwork wide = tp_relu_mlp({784, 16384, 10}, layer_fn, comm);
/// @endcode

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/graph.h"
#include "tessera/lirpa/mlp_builder.h"
#include "tessera/lirpa/verify.h"

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa {

/// How one Linear layer is split over the ranks.
enum class TpSplit {
  Column,     ///< rank r: W[out_r, :] and b[out_r]; replicated input, local output block
  Row,        ///< rank r: W[:, in_r] and the whole b; local input block, summed output
  Replicated  ///< every rank: the whole W and b
};

/// One Linear layer y = x W^T + b, or 2-D convolution y = conv(x, K) + b on flattened
/// [C, H, W] values, as this rank holds it, optionally followed by a ReLU.
struct TpLayer {
  TpSplit split = TpSplit::Replicated;
  int64_t in_features = 0, out_features = 0;  ///< the whole layer's sizes (flattened)
  /// Linear: this rank's block of W^T: Column [in, out_r], Row [in_r, out], Replicated
  /// [in, out]. Undefined for a convolution.
  at::Tensor weight_t;
  /// Convolution (groups 1): this rank's kernels, Column [C_out_r, C_in, kh, kw], Row
  /// [C_out, C_in_r, kh, kw], Replicated whole. Undefined for a Linear layer.
  at::Tensor kernel;
  Conv2dGeometry conv;                        ///< stride, padding, dilation of the convolution
  std::vector<int64_t> in_shape, out_shape;   ///< whole [C, H, W] of a convolution's input, output
  /// Per output neuron (a convolution's channel bias repeated over its positions): Column
  /// this rank's block b[out_r]; otherwise the whole b.
  at::Tensor bias;
  bool relu = false;      ///< a ReLU follows
  bool is_conv() const { return kernel.defined(); }
};

/// A Linear/ReLU chain split over the ranks of a communicator.
class TpNetwork {
 public:
  TpNetwork(std::shared_ptr<dist::Communicator> comm, std::vector<TpLayer> layers);

  const std::vector<TpLayer>& layers() const { return layers_; }
  dist::Communicator& comm() const { return *comm_; }
  const std::shared_ptr<dist::Communicator>& shared_comm() const { return comm_; }
  int64_t input_size() const { return layers_.front().in_features; }
  int64_t output_size() const { return layers_.back().out_features; }
  /// Block of neurons [offset, offset + count) of this rank for a layer of `n` neurons.
  std::pair<int64_t, int64_t> block(int64_t n) const;
  /// Bytes of the weights and biases held by this rank.
  int64_t local_bytes() const;
  /// Collective: y [N, out] (on every rank) for points x [N, in].
  at::Tensor forward(const at::Tensor& x, at::ScalarType dtype) const;

 private:
  std::shared_ptr<dist::Communicator> comm_;
  std::vector<TpLayer> layers_;
};

/// Splits for `n` Linear layers where `relu[k]` says a ReLU follows layer k: Column/Row for
/// each Linear-ReLU-Linear zone from the first layer on, Replicated for the rest.
std::vector<TpSplit> tp_plan(const std::vector<bool>& relu);

/// The TP form of a graph that is a chain of linear operators (Linear, Affine, Reshape,
/// Identity: each run between ReLUs becomes one dense layer; a Conv alone between ReLUs
/// stays a convolution) and ReLUs; throws Unsupported naming the first other operator.
/// Every rank passes the same graph and keeps its blocks.
TpNetwork tp_from_graph(const Graph& graph, std::shared_ptr<dist::Communicator> comm);

/// The network of `build_relu_mlp(sizes, layer, ...)`, each rank keeping only its blocks as
/// the layers are made (`layer` must return the same tensors on every rank).
TpNetwork tp_relu_mlp(const std::vector<int64_t>& sizes, const MlpLayerFn& layer,
                      std::shared_ptr<dist::Communicator> comm);

struct TpOptions {
  /// Bound each zone's hidden neurons (after the first zone) by IBP over the zone's input
  /// box, and its output neurons by CROWN back to the zone's input only, instead of CROWN
  /// back to the network input: no A matrix crosses a zone. Exact on one zone; far looser
  /// on two (bench/RESULTS.md: output bounds 100-200x wider on random 784 -> h x 3 -> 10).
  bool local_intermediate = false;
};

/// Collective: bounds of `c y` (c: [K, out]; undefined = identity) over lower <= x <= upper,
/// the same on every rank. IBP, CROWN and alpha-CROWN (with `tp.local_intermediate`, only the
/// final pass's slopes are optimised).
BoundsResult tp_compute_bounds(const TpNetwork& net, const at::Tensor& lower, const at::Tensor& upper,
                               const BoundOptions& options, const at::Tensor& c = {},
                               const TpOptions& tp = {});

/// Collective: complete verification of `property` on a TP network, the same result on
/// every rank (`verify` with every pass a TP one): PGD attack through a TP forward pass,
/// CROWN and alpha-CROWN (tp_compute_bounds) on the specification rows, then branch and
/// bound whose sub-domains are bounded by TP CROWN, one at a time: input splitting for
/// low-dimensional inputs (as `verify`'s `bab.split`), else ReLU splitting with the split
/// neurons' bounds clamped (each rank keeps its blocks of every domain's bounds and splits;
/// no beta multipliers, so a sub-domain with every ReLU split can stay unproven: `unknown`).
/// Every clock decision is rank 0's.
VerifyResult tp_verify(const TpNetwork& net, const Property& property, const VerifyOptions& options,
                       const ProgressFn& progress = {});

}  // namespace tessera::lirpa
