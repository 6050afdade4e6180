// OnnxBuilder: a ModelProto assembled node by node.

#include "tessera/lirpa/onnx_builder.h"

#include <ATen/ATen.h>
#include <onnx/onnx_pb.h>

#include <fstream>

#include "tessera/core/error.h"

namespace tessera::lirpa {

struct OnnxBuilder::Impl {
  onnx::ModelProto model;
};

OnnxBuilder::OnnxBuilder(const std::string& input_name, const std::vector<int64_t>& input_shape)
    : impl_(std::make_unique<Impl>()), input_(input_name) {
  impl_->model.set_ir_version(7);
  impl_->model.set_producer_name("tessera");
  impl_->model.add_opset_import()->set_version(13);
  auto* g = impl_->model.mutable_graph();
  g->set_name("tessera_model");
  auto* in = g->add_input();
  in->set_name(input_name);
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : input_shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

OnnxBuilder::~OnnxBuilder() = default;

std::string OnnxBuilder::constant(const std::string& name, const at::Tensor& value) {
  auto* t = impl_->model.mutable_graph()->add_initializer();
  t->set_name(name);
  for (int64_t d : value.sizes()) t->add_dims(d);
  if (at::isFloatingType(value.scalar_type())) {
    t->set_data_type(onnx::TensorProto::DOUBLE);
    at::Tensor v = value.to(at::kDouble).contiguous();
    t->set_raw_data(std::string(static_cast<const char*>(v.data_ptr()), v.numel() * sizeof(double)));
  } else {
    t->set_data_type(onnx::TensorProto::INT64);
    at::Tensor v = value.to(at::kLong).contiguous();
    t->set_raw_data(std::string(static_cast<const char*>(v.data_ptr()), v.numel() * sizeof(int64_t)));
  }
  return name;
}

std::string OnnxBuilder::node(const std::string& op_type, const std::vector<std::string>& inputs,
                              const std::vector<OnnxAttr>& attrs) {
  auto* n = impl_->model.mutable_graph()->add_node();
  std::string name = op_type + "_" + std::to_string(count_++);
  n->set_name(name);
  n->set_op_type(op_type);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(name + "_out");
  for (const auto& a : attrs) {
    auto* p = n->add_attribute();
    p->set_name(a.name);
    if (a.kind == OnnxAttr::Int) {
      p->set_type(onnx::AttributeProto::INT);
      p->set_i(a.ints.at(0));
    } else if (a.kind == OnnxAttr::Ints) {
      p->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : a.ints) p->add_ints(v);
    } else {
      p->set_type(onnx::AttributeProto::FLOAT);
      p->set_f(static_cast<float>(a.f));
    }
  }
  return name + "_out";
}

std::vector<std::string> OnnxBuilder::node_with_outputs(const std::string& op_type,
                                                        const std::vector<std::string>& inputs, int outputs,
                                                        const std::vector<OnnxAttr>& attrs) {
  std::vector<std::string> names{node(op_type, inputs, attrs)};
  auto* n = impl_->model.mutable_graph()->mutable_node(impl_->model.graph().node_size() - 1);
  for (int k = 1; k < outputs; ++k) {
    names.push_back(n->name() + "_out" + std::to_string(k));
    n->add_output(names.back());
  }
  return names;
}

void OnnxBuilder::set_output(const std::string& name) {
  auto* g = impl_->model.mutable_graph();
  g->clear_output();
  auto* out = g->add_output();
  out->set_name(name);
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

std::string OnnxBuilder::bytes() const { return impl_->model.SerializeAsString(); }

void OnnxBuilder::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  TESSERA_CHECK(out.good(), InvalidInput, "cannot write '", path, "'");
  out << bytes();
}

}  // namespace tessera::lirpa
