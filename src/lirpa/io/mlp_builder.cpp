// build_relu_mlp: a ReLU MLP from code, layer by layer, into any parameter store;
// build_relu_cnn: a random ReLU CNN through the ONNX builder.

#include "tessera/lirpa/mlp_builder.h"

#include <ATen/ATen.h>

#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"

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
    store->put(key + "/weight", w.t());  // y = x W^T + b (a sharded store copies only its rows)
    store->put(key + "/bias", b.reshape({-1}).contiguous());
    w = at::Tensor();  // the whole layer is released before the next one is made
    cur = g.add_node(key, detail::make_linear(key + "/weight", key + "/bias"), {cur});
    if (k + 2 < sizes.size()) cur = g.add_node(key + "/relu", detail::make_relu(), {cur});
  }
  g.set_output(cur);
  return g;
}

Graph build_relu_cnn(const std::vector<int64_t>& chw, const std::vector<int64_t>& channels,
                     const std::vector<int64_t>& strides, int64_t outputs, uint64_t seed) {
  TESSERA_CHECK(chw.size() == 3 && channels.size() == strides.size() && outputs >= 1, InvalidInput,
                "build_relu_cnn: input [C, H, W], one stride per conv layer and at least one output");
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto normal = [&](std::vector<int64_t> shape, double std) { return at::normal(0.0, std, shape, gen, at::kDouble); };
  OnnxBuilder b("x", {1, chw[0], chw[1], chw[2]});
  std::string cur = b.input();
  int64_t c = chw[0], h = chw[1], w = chw[2];
  for (size_t k = 0; k < channels.size(); ++k) {
    const std::string name = "conv" + std::to_string(k);
    auto kernel = b.constant(name + ".w", normal({channels[k], c, 3, 3}, 1.0 / std::sqrt(9.0 * c)));
    auto bias = b.constant(name + ".b", normal({channels[k]}, 0.1));
    cur = b.node("Conv", {cur, kernel, bias},
                 {OnnxAttr::list("strides", {strides[k], strides[k]}), OnnxAttr::list("pads", {1, 1, 1, 1})});
    cur = b.node("Relu", {cur});
    c = channels[k];
    h = (h - 1) / strides[k] + 1;  // (h + 2 - 3) / s + 1
    w = (w - 1) / strides[k] + 1;
  }
  cur = b.node("Flatten", {cur}, {OnnxAttr::integer("axis", 1)});
  const int64_t n = c * h * w;
  auto fc = b.constant("fc.w", normal({outputs, n}, 1.0 / std::sqrt(double(n))));
  b.set_output(b.node("Gemm", {cur, fc, b.constant("fc.b", normal({outputs}, 0.1))}, {OnnxAttr::integer("transB", 1)}));
  return load_onnx_bytes(b.bytes(), "<random cnn>");
}

}  // namespace tessera::lirpa
