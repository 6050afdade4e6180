// Builds a small ReLU network (2 -> 8 -> 8 -> 2) as an ONNX file and a VNN-LIB property
// in a folder, then bounds its outputs with IBP, CROWN and alpha-CROWN.
// Usage: example_lirpa_demo [FOLDER]   (default: the system temp folder)

#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"
#include "tessera/lirpa/vnnlib.h"

using namespace tessera::lirpa;

int main(int argc, char** argv) {
  std::filesystem::path dir = argc > 1 ? argv[1] : std::filesystem::temp_directory_path() / "tessera_lirpa_demo";
  std::filesystem::create_directories(dir);
  at::manual_seed(0);
  OnnxBuilder b("x", {1, 2});
  std::string cur = b.input();
  int64_t prev = 2;
  for (int64_t k : {8, 8, 2}) {
    auto w = b.constant("w" + std::to_string(prev) + cur, at::randn({k, prev}, at::kDouble) / std::sqrt(double(prev)));
    auto bias = b.constant("b" + std::to_string(prev) + cur, at::randn({k}, at::kDouble) * 0.1);
    cur = b.node("Gemm", {cur, w, bias}, {OnnxAttr::integer("transB", 1)});
    if (k != 2) cur = b.node("Relu", {cur});
    prev = k;
  }
  b.set_output(cur);
  std::string model = (dir / "demo_net.onnx").string(), prop = (dir / "demo_prop.vnnlib").string();
  b.save(model);
  std::ofstream(prop) << "; the unsafe region: Y_1 >= Y_0 for x in [-1, 1] x [-0.5, 0.5]\n"
                         "(declare-const X_0 Real)\n(declare-const X_1 Real)\n"
                         "(declare-const Y_0 Real)\n(declare-const Y_1 Real)\n"
                         "(assert (>= X_0 -1))\n(assert (<= X_0 1))\n"
                         "(assert (>= X_1 -0.5))\n(assert (<= X_1 0.5))\n"
                         "(assert (>= Y_1 Y_0))\n";
  std::cout << "wrote " << model << " and " << prop << "\n";
  Graph g = load_onnx(model);
  Property p = load_vnnlib(prop);
  for (Method m : {Method::Ibp, Method::Crown, Method::AlphaCrown}) {
    BoundOptions o;
    o.method = m;
    BoundsResult r = compute_bounds(g, p.cases[0].lower, p.cases[0].upper, o);
    std::printf("%-12s y_0 in [%9.5f, %9.5f]   y_1 in [%9.5f, %9.5f]\n", method_name(m).c_str(),
                r.lower[0].item<double>(), r.upper[0].item<double>(), r.lower[1].item<double>(),
                r.upper[1].item<double>());
  }
  return 0;
}
