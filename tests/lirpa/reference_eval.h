#pragma once
// An independent plain evaluator of ONNX graphs for tests: reads the protobuf directly and
// evaluates MatMul, Gemm, Add, Sub, Relu, Flatten and Conv with loops over std::vector
// in double precision. It shares no code with the library's operators.

#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::lirpa::testing {

struct RefTensor {
  std::vector<int64_t> shape;
  std::vector<double> v;
  int64_t dim(int i) const { return shape[i < 0 ? shape.size() + i : i]; }
};

inline RefTensor ref_from_proto(const onnx::TensorProto& t) {
  RefTensor r;
  r.shape.assign(t.dims().begin(), t.dims().end());
  int64_t n = 1;
  for (auto d : r.shape) n *= d;
  r.v.resize(n);
  if (t.data_type() == onnx::TensorProto::FLOAT) {
    if (t.has_raw_data()) {
      std::vector<float> f(n);
      std::memcpy(f.data(), t.raw_data().data(), n * sizeof(float));
      r.v.assign(f.begin(), f.end());
    } else {
      r.v.assign(t.float_data().begin(), t.float_data().end());
    }
  } else if (t.data_type() == onnx::TensorProto::DOUBLE) {
    if (t.has_raw_data()) std::memcpy(r.v.data(), t.raw_data().data(), n * sizeof(double));
    else r.v.assign(t.double_data().begin(), t.double_data().end());
  } else {
    throw std::runtime_error("reference evaluator: unsupported tensor type");
  }
  return r;
}

inline RefTensor ref_matmul(const RefTensor& a, const RefTensor& b) {
  // a [m, k] (or [k]) times b [k, n] (or [k])
  int64_t k = a.shape.size() == 1 ? a.dim(0) : a.dim(-1);
  int64_t m = static_cast<int64_t>(a.v.size()) / k;
  int64_t n = b.shape.size() == 1 ? 1 : b.dim(-1);
  if (b.dim(0) != k) throw std::runtime_error("reference matmul: shape mismatch");
  RefTensor r;
  r.shape = a.shape;
  if (b.shape.size() == 1) r.shape.pop_back(); else r.shape.back() = n;
  if (a.shape.size() == 1) r.shape = {n};
  r.v.assign(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += a.v[i * k + p] * b.v[p * n + j];
      r.v[i * n + j] = s;
    }
  return r;
}

inline RefTensor ref_add(const RefTensor& a, const RefTensor& b, double sign) {
  const RefTensor& big = a.v.size() >= b.v.size() ? a : b;
  RefTensor r = big;
  for (size_t i = 0; i < r.v.size(); ++i) {
    double x = a.v[i % a.v.size()], y = b.v[i % b.v.size()];  // trailing broadcast
    r.v[i] = x + sign * y;
  }
  return r;
}

inline RefTensor ref_conv(const RefTensor& x, const RefTensor& w, const RefTensor* b, int64_t stride, int64_t pad) {
  int64_t c = x.dim(1), h = x.dim(2), wd = x.dim(3), co = w.dim(0), k = w.dim(2);
  int64_t ho = (h + 2 * pad - k) / stride + 1, wo = (wd + 2 * pad - k) / stride + 1;
  RefTensor r{{1, co, ho, wo}, std::vector<double>(co * ho * wo, 0.0)};
  for (int64_t o = 0; o < co; ++o)
    for (int64_t i = 0; i < ho; ++i)
      for (int64_t j = 0; j < wo; ++j) {
        double s = b ? b->v[o] : 0.0;
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t p = 0; p < k; ++p)
            for (int64_t q = 0; q < k; ++q) {
              int64_t yy = i * stride - pad + p, xx = j * stride - pad + q;
              if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
              s += w.v[((o * c + ci) * k + p) * k + q] * x.v[(ci * h + yy) * wd + xx];
            }
        r.v[(o * ho + i) * wo + j] = s;
      }
  return r;
}

/// Evaluates the model file at one input (flat values) and returns the flat output.
inline std::vector<double> reference_eval(const std::string& path, const std::vector<double>& input) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  onnx::ModelProto model;
  if (!model.ParseFromString(ss.str())) throw std::runtime_error("reference: cannot parse " + path);
  const auto& g = model.graph();
  std::map<std::string, RefTensor> vals;
  for (const auto& t : g.initializer()) vals[t.name()] = ref_from_proto(t);
  for (const auto& i : g.input()) {
    if (vals.count(i.name())) continue;
    RefTensor x;
    for (const auto& d : i.type().tensor_type().shape().dim()) x.shape.push_back(d.dim_value() > 0 ? d.dim_value() : 1);
    x.v = input;
    vals[i.name()] = x;
  }
  for (const auto& n : g.node()) {
    auto attr_i = [&](const char* name, int64_t def) {
      for (const auto& a : n.attribute()) if (a.name() == name) return a.ints_size() ? a.ints(0) : a.i();
      return def;
    };
    const std::string& op = n.op_type();
    RefTensor out;
    if (op == "MatMul") out = ref_matmul(vals.at(n.input(0)), vals.at(n.input(1)));
    else if (op == "Add" || op == "Sub") out = ref_add(vals.at(n.input(0)), vals.at(n.input(1)), op == "Add" ? 1 : -1);
    else if (op == "Relu") {
      out = vals.at(n.input(0));
      for (auto& v : out.v) v = v > 0 ? v : 0;
    } else if (op == "Flatten") {
      out = vals.at(n.input(0));
      out.shape = {1, static_cast<int64_t>(out.v.size())};
    } else if (op == "Gemm") {
      RefTensor w = vals.at(n.input(1));
      if (attr_i("transB", 0)) {  // B^T
        RefTensor t{{w.dim(1), w.dim(0)}, std::vector<double>(w.v.size())};
        for (int64_t i = 0; i < w.dim(0); ++i)
          for (int64_t j = 0; j < w.dim(1); ++j) t.v[j * w.dim(0) + i] = w.v[i * w.dim(1) + j];
        w = t;
      }
      out = ref_matmul(vals.at(n.input(0)), w);
      if (n.input_size() > 2) out = ref_add(out, vals.at(n.input(2)), 1);
    } else if (op == "Conv") {
      const RefTensor* b = n.input_size() > 2 ? &vals.at(n.input(2)) : nullptr;
      out = ref_conv(vals.at(n.input(0)), vals.at(n.input(1)), b, attr_i("strides", 1), attr_i("pads", 0));
    } else {
      throw std::runtime_error("reference evaluator: unsupported op " + op);
    }
    vals[n.output(0)] = out;
  }
  return vals.at(g.output(0).name()).v;
}

}  // namespace tessera::lirpa::testing
