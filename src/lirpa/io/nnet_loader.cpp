// .nnet loader (the ACAS Xu text format): header, normalisation, then for each layer the
// weight rows and the biases; hidden layers are ReLU, the last layer is linear.

#include <ATen/ATen.h>

#include <fstream>
#include <sstream>

#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"
#include "tessera/lirpa/model_io.h"

namespace tessera::lirpa {
namespace {

/// The numbers of every non-comment line, one vector per line, with their line numbers.
std::vector<std::pair<int, std::vector<double>>> read_lines(const std::string& path) {
  std::ifstream in(path);
  TESSERA_CHECK(in.good(), InvalidInput, "cannot open .nnet file '", path, "'");
  std::vector<std::pair<int, std::vector<double>>> out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("//", 0) == 0 || line.find_first_not_of(" \t\r,") == std::string::npos) continue;
    std::vector<double> vals;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) {
      if (cell.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        vals.push_back(std::stod(cell));
      } catch (const std::exception&) {
        TESSERA_THROW(ParseError, path, ":", number, ": not a number: '", cell, "'");
      }
    }
    out.push_back({number, vals});
  }
  return out;
}

}  // namespace

Graph load_nnet(const std::string& path, bool normalize) {
  auto lines = read_lines(path);
  size_t pos = 0;
  auto next = [&](size_t min_count, const char* what) -> const std::vector<double>& {
    TESSERA_CHECK(pos < lines.size(), ParseError, path, ": file ends before ", what);
    const auto& l = lines[pos++];
    TESSERA_CHECK(l.second.size() >= min_count, ParseError, path, ":", l.first, ": expected ", min_count,
                  " values for ", what, ", found ", l.second.size());
    return l.second;
  };
  const auto& head = next(4, "the header");
  int layers = static_cast<int>(head[0]);
  TESSERA_CHECK(layers >= 1 && layers < 1000, ParseError, path, ": bad layer count ", layers);
  std::vector<double> sizes_d = next(layers + 1, "the layer sizes");
  std::vector<int64_t> sizes(sizes_d.begin(), sizes_d.begin() + layers + 1);
  next(1, "the symmetric flag");
  int64_t n_in = sizes[0], n_out = sizes[layers];
  next(n_in, "the input minimums");
  next(n_in, "the input maximums");
  std::vector<double> means = next(n_in + 1, "the means"), ranges = next(n_in + 1, "the ranges");
  auto store = std::make_shared<LocalParamStore>();
  Graph g(store);
  int cur = g.add_input("input", {n_in});
  if (normalize) {  // x_n = (x - mean) / range
    at::Tensor m = at::tensor(std::vector<double>(means.begin(), means.begin() + n_in), at::kDouble);
    at::Tensor r = at::tensor(std::vector<double>(ranges.begin(), ranges.begin() + n_in), at::kDouble);
    store->put("input/scale", 1.0 / r);
    store->put("input/shift", -m / r);
    cur = g.add_node("normalize", detail::make_affine("input/scale", "input/shift", {n_in}), {cur});
  }
  for (int k = 0; k < layers; ++k) {
    at::Tensor w = at::empty({sizes[k + 1], sizes[k]}, at::kDouble);
    for (int64_t i = 0; i < sizes[k + 1]; ++i) {
      const auto& row = next(sizes[k], "a weight row");
      for (int64_t j = 0; j < sizes[k]; ++j) w[i][j] = row[j];
    }
    at::Tensor b = at::empty({sizes[k + 1]}, at::kDouble);
    for (int64_t i = 0; i < sizes[k + 1]; ++i) b[i] = next(1, "a bias")[0];
    std::string key = "layer" + std::to_string(k);
    store->put(key + "/weight", w.t().contiguous());  // y = x W^T + b
    store->put(key + "/bias", b);
    cur = g.add_node(key, detail::make_linear(key + "/weight", key + "/bias"), {cur});
    if (k + 1 < layers) cur = g.add_node(key + "/relu", detail::make_relu(), {cur});
  }
  if (normalize) {  // y = y_n * range_out + mean_out
    store->put("output/scale", at::full({n_out}, ranges[n_in], at::kDouble));
    store->put("output/shift", at::full({n_out}, means[n_in], at::kDouble));
    cur = g.add_node("denormalize", detail::make_affine("output/scale", "output/shift", {n_out}), {cur});
  }
  g.set_output(cur);
  return g;
}

}  // namespace tessera::lirpa
