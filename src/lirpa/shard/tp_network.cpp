// TpNetwork: a Linear/ReLU chain split into column/row zones; the layout, the forward pass
// and the block-by-block builder of wide MLPs.

#include <ATen/ATen.h>

#include "lirpa/shard/tp_detail.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/tensor_parallel.h"

namespace tessera::lirpa {

std::vector<TpSplit> tp_plan(const std::vector<bool>& relu) {
  const size_t n = relu.size();
  std::vector<TpSplit> split(n, TpSplit::Replicated);
  for (size_t k = 0; k + 1 < n;) {
    if (relu[k]) {  // Linear k, ReLU, Linear k+1: one zone
      split[k] = TpSplit::Column;
      split[k + 1] = TpSplit::Row;
      k += 2;
    } else {
      ++k;
    }
  }
  return split;
}

TpNetwork::TpNetwork(std::shared_ptr<dist::Communicator> comm, std::vector<TpLayer> layers)
    : comm_(std::move(comm)), layers_(std::move(layers)) {
  TESSERA_CHECK(comm_ != nullptr, InvalidInput, "TpNetwork needs a communicator");
  TESSERA_CHECK(!layers_.empty(), InvalidInput, "TpNetwork needs at least one layer");
  for (size_t k = 0; k < layers_.size(); ++k) {
    const TpLayer& l = layers_[k];
    TESSERA_CHECK(k == 0 || l.in_features == layers_[k - 1].out_features, DimensionMismatch, "TP layer ", k,
                  " takes ", l.in_features, " inputs but layer ", k - 1, " has ", layers_[k - 1].out_features,
                  " outputs");
    TESSERA_CHECK(l.split != TpSplit::Column || (k + 1 < layers_.size() && l.relu &&
                                                 layers_[k + 1].split == TpSplit::Row),
                  InvalidInput, "TP layer ", k, ": a column-parallel layer must be followed by a ReLU and a "
                  "row-parallel layer");
    TESSERA_CHECK(l.split != TpSplit::Column || detail::tp_local_out(l) == detail::tp_local_in(layers_[k + 1]),
                  InvalidInput, "TP layer ", k, ": this rank's output block has ", detail::tp_local_out(l),
                  " neurons but layer ", k + 1, " takes ", detail::tp_local_in(layers_[k + 1]));
    TESSERA_CHECK(l.split != TpSplit::Row || (k > 0 && layers_[k - 1].split == TpSplit::Column), InvalidInput,
                  "TP layer ", k, ": a row-parallel layer must follow a column-parallel one");
  }
  TESSERA_CHECK(!layers_.back().relu, Unsupported, "TP: a ReLU on the network output is not supported");
}

std::pair<int64_t, int64_t> TpNetwork::block(int64_t n) const {
  return detail::tp_block(n, comm_->size(), comm_->rank());
}

int64_t TpNetwork::local_bytes() const {
  int64_t bytes = 0;
  for (const TpLayer& l : layers_)
    bytes += (l.is_conv() ? l.kernel.nbytes() : l.weight_t.nbytes()) + l.bias.nbytes();
  return bytes;
}

at::Tensor TpNetwork::forward(const at::Tensor& x, at::ScalarType dtype) const {
  TESSERA_CHECK(x.dim() >= 1, InvalidInput, "TP forward: x must have a batch dimension");
  at::Tensor h = x.to(dtype).reshape({x.size(0), -1});
  TESSERA_CHECK(h.size(1) == input_size(), DimensionMismatch, "TP forward: ", h.size(1), " inputs given, the network takes ",
                input_size());
  for (const TpLayer& l : layers_) {
    at::Tensor y = detail::tp_apply(l, h, dtype, false);  // x W^T or conv(x, K) (local block)
    if (l.split == TpSplit::Row) {
      y = y.contiguous();
      comm_->all_reduce(y, dist::ReduceOp::Sum);  // sum_r x_r W[:, in_r]^T
    }
    h = y + l.bias.to(dtype);
    if (l.relu) h = h.clamp_min(0);
  }
  return h;
}

TpNetwork tp_relu_mlp(const std::vector<int64_t>& sizes, const MlpLayerFn& layer,
                      std::shared_ptr<dist::Communicator> comm) {
  TESSERA_CHECK(sizes.size() >= 2, InvalidInput, "an MLP needs at least an input and an output size");
  TESSERA_CHECK(comm != nullptr, InvalidInput, "tp_relu_mlp needs a communicator");
  std::vector<bool> relu;
  for (size_t k = 0; k + 1 < sizes.size(); ++k) relu.push_back(k + 2 < sizes.size());
  std::vector<TpSplit> plan = tp_plan(relu);
  std::vector<TpLayer> layers;
  for (size_t k = 0; k + 1 < sizes.size(); ++k) {
    auto [w, b] = layer(static_cast<int>(k), sizes[k], sizes[k + 1]);
    TESSERA_CHECK(w.dim() == 2 && w.size(0) == sizes[k + 1] && w.size(1) == sizes[k] && b.numel() == sizes[k + 1],
                  DimensionMismatch, "layer ", k, ": expected W [", sizes[k + 1], ", ", sizes[k], "] and b [",
                  sizes[k + 1], "]");
    layers.push_back(detail::tp_cut_layer(w, b.reshape({-1}), plan[k], relu[k], comm->size(), comm->rank()));
    w = at::Tensor();  // the whole layer is released before the next one is made
  }
  return TpNetwork(std::move(comm), std::move(layers));
}

namespace detail {

std::pair<int64_t, int64_t> tp_block(int64_t n, int parts, int rank, int64_t unit) {
  TESSERA_CHECK(unit >= 1 && n % unit == 0, InvalidInput, "TP: ", n, " neurons are not groups of ", unit);
  std::vector<int64_t> counts = dist::balanced_counts(n / unit, parts);
  int64_t offset = 0;
  for (int r = 0; r < rank; ++r) offset += counts[r];
  return {offset * unit, counts[rank] * unit};
}

TpLayer tp_cut_layer(const at::Tensor& w, const at::Tensor& b, TpSplit split, bool relu, int parts, int rank,
                     int64_t unit) {
  TpLayer l;
  l.split = split;
  l.in_features = w.size(1);
  l.out_features = w.size(0);
  l.relu = relu;
  if (split == TpSplit::Column) {
    auto [off, n] = tp_block(w.size(0), parts, rank, unit);
    l.weight_t = w.slice(0, off, off + n).t().clone(at::MemoryFormat::Contiguous);  // W[out_r, :]^T: [in, out_r]
    l.bias = b.slice(0, off, off + n).clone();  // a copy: never a view keeping b alive
  } else if (split == TpSplit::Row) {
    auto [off, n] = tp_block(w.size(1), parts, rank, unit);
    l.weight_t = w.slice(1, off, off + n).t().clone(at::MemoryFormat::Contiguous);  // W[:, in_r]^T: [in_r, out]
    l.bias = b.clone(at::MemoryFormat::Contiguous);
  } else {
    l.weight_t = w.t().clone(at::MemoryFormat::Contiguous);
    l.bias = b.clone(at::MemoryFormat::Contiguous);
  }
  return l;
}

}  // namespace detail
}  // namespace tessera::lirpa
