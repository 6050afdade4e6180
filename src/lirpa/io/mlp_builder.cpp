// build_relu_mlp: a ReLU MLP from code, layer by layer, into any parameter store.

#include "tessera/lirpa/mlp_builder.h"

#include <ATen/ATen.h>

#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa {

Graph build_relu_mlp(const std::vector<int64_t>& sizes, const MlpLayerFn& layer, std::shared_ptr<ParamStore> store) {
  TESSERA_CHECK(sizes.size() >= 2, InvalidInput, "an MLP needs at least an input and an output size");
  Graph g(store);
  int cur = g.add_input("input", {sizes[0]});
  for (size_t k = 0; k + 1 < sizes.size(); ++k) {
    auto [w, b] = layer(static_cast<int>(k), sizes[k], sizes[k + 1]);
    TESSERA_CHECK(w.dim() == 2 && w.size(0) == sizes[k + 1] && w.size(1) == sizes[k] && b.numel() == sizes[k + 1],
                  DimensionMismatch, "layer ", k, ": expected W [", sizes[k + 1], ", ", sizes[k], "] and b [",
                  sizes[k + 1], "]");
    std::string key = "layer" + std::to_string(k);
    store->put(key + "/weight", w.t().contiguous());  // y = x W^T + b
    store->put(key + "/bias", b.reshape({-1}).contiguous());
    w = at::Tensor();  // the whole layer is released before the next one is made
    cur = g.add_node(key, detail::make_linear(key + "/weight", key + "/bias"), {cur});
    if (k + 2 < sizes.size()) cur = g.add_node(key + "/relu", detail::make_relu(), {cur});
  }
  g.set_output(cur);
  return g;
}

}  // namespace tessera::lirpa
