#pragma once
/// @file onnx_builder.h
/// Writes small ONNX models from code (tests, examples, demos).
///
/// @code
///   OnnxBuilder b("x", {1, 2});
///   auto h = b.node("Gemm", {b.input(), b.constant("w1", w1), b.constant("b1", b1)},
///                   {OnnxAttr::integer("transB", 1)});
///   b.set_output(b.node("Relu", {h}));
///   b.save("/tmp/net.onnx");        // or load_onnx_bytes(b.bytes())
/// @endcode

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

namespace tessera::lirpa {

/// One node attribute: an int, an int list or a float.
struct OnnxAttr {
  std::string name;
  std::vector<int64_t> ints;
  double f = 0;
  enum Kind { Int, Ints, Float } kind = Int;
  static OnnxAttr integer(std::string n, int64_t v) { return {std::move(n), {v}, 0, Int}; }
  static OnnxAttr list(std::string n, std::vector<int64_t> v) { return {std::move(n), std::move(v), 0, Ints}; }
  static OnnxAttr real(std::string n, double v) { return {std::move(n), {}, v, Float}; }
};

class OnnxBuilder {
 public:
  OnnxBuilder(const std::string& input_name, const std::vector<int64_t>& input_shape);
  ~OnnxBuilder();
  OnnxBuilder(const OnnxBuilder&) = delete;
  OnnxBuilder& operator=(const OnnxBuilder&) = delete;

  const std::string& input() const { return input_; }
  /// Adds an initializer (stored as float64, or int64 for integer tensors); returns its name.
  std::string constant(const std::string& name, const at::Tensor& value);
  /// Adds a node; returns the name of its (single) output.
  std::string node(const std::string& op_type, const std::vector<std::string>& inputs,
                   const std::vector<OnnxAttr>& attrs = {});
  /// Adds a node with `outputs` outputs (Split); returns their names.
  std::vector<std::string> node_with_outputs(const std::string& op_type, const std::vector<std::string>& inputs,
                                             int outputs, const std::vector<OnnxAttr>& attrs = {});
  void set_output(const std::string& name);
  /// The serialised model.
  std::string bytes() const;
  void save(const std::string& path) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string input_;
  int count_ = 0;
};

}  // namespace tessera::lirpa
