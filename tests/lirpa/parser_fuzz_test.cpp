// Inputs found by fuzzing the parsers (fuzz/, `make fuzz`), and the fuzz corpora with seeded
// mutations of them run through the normal build (tests/fuzz_smoke.h): every input either
// parses or throws a typed tessera::Error.

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tessera/core/error.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"
#include "tessera/lirpa/verify_options.h"
#include "tessera/lirpa/vnnlib.h"
#include "fuzz_smoke.h"

namespace tessera::lirpa {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `parse` on the corpus of `target` and on `per_input` mutations of each input
// (tests/fuzz_smoke.h); returns how many inputs were run. A non-tessera exception fails the
// test naming the input.
template <class Parse>
int run_corpus(const std::string& target, int per_input, Parse parse) {
  return test::fuzz_smoke(target, per_input, [&](const std::string& bytes, const std::string& name) {
    try {
      parse(bytes, name);
    } catch (const Error&) {
    } catch (const std::exception& ex) {
      ADD_FAILURE() << name << ": untyped exception: " << ex.what();
    }
  });
}

const char* kTwoInputs = R"(
(declare-const X_0 Real) (declare-const X_1 Real) (declare-const Y_0 Real)
(assert (>= X_0 0)) (assert (<= X_0 1)) (assert (>= X_1 0)) (assert (<= X_1 1))
)";

TEST(ParserFuzz, VnnlibCorpusAndMutationsGiveTypedErrorsOnly) {
  EXPECT_GE(run_corpus("vnnlib", 50, [](const std::string& s, const std::string& src) { parse_vnnlib(s, src); }), 5000);
}

TEST(ParserFuzz, VerifyConfigCorpusAndMutationsGiveTypedErrorsOnly) {
  EXPECT_GE(run_corpus("verify_config", 10,
                       [](const std::string& s, const std::string& src) { parse_verify_config(s, src); }),
            1000);
}

TEST(ParserFuzz, OnnxCorpusAndMutationsGiveTypedErrorsOnly) {
  EXPECT_GE(run_corpus("onnx", 20, [](const std::string& s, const std::string& src) { load_onnx_bytes(s, src); }), 2000);
}

// An input variable with coefficient 0 in an output constraint was written to row[index]
// of a row of n_outputs entries (a heap overflow when the index is >= n_outputs).
TEST(ParserFuzz, VnnlibZeroInputTermInOutputConstraint) {
  Property p = parse_vnnlib(std::string(kTwoInputs) + "(assert (<= (+ Y_0 (* 0 X_1)) 3))");
  ASSERT_EQ(p.cases.size(), 1u);
  at::Tensor c = p.cases[0].spec_matrix();
  ASSERT_EQ(c.sizes(), at::IntArrayRef({1, 1}));
  EXPECT_EQ(c.item<double>(), 1.0);
  EXPECT_EQ(p.cases[0].spec_rhs().item<double>(), 3.0);
}

// std::stoi threw std::out_of_range on a long index.
TEST(ParserFuzz, VnnlibHugeVariableIndexIsParseError) {
  EXPECT_THROW(parse_vnnlib("(declare-const X_99999999999999999999 Real)"), ParseError);
  EXPECT_THROW(parse_vnnlib("(declare-const Y_100000000 Real)"), ParseError);
}

// X_99999999 alone sized vectors of 10^8 doubles per conjunction; now every index below the
// largest must be declared.
TEST(ParserFuzz, VnnlibGapInDeclaredVariablesIsParseError) {
  try {
    parse_vnnlib("(declare-const X_0 Real) (declare-const X_50000000 Real) (declare-const Y_0 Real)");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("X_50000000 is declared but X_1 is not"), std::string::npos) << e.what();
  }
}

// Deep nesting overflowed the stack of the recursive-descent parser.
TEST(ParserFuzz, VnnlibDeepNestingIsParseError) {
  std::string deep = std::string(kTwoInputs) + "(assert " + std::string(200000, '(');
  EXPECT_THROW(parse_vnnlib(deep), ParseError);
  std::string deep_term = std::string(kTwoInputs) + "(assert (<= Y_0 " + std::string(200000, '(');
  EXPECT_THROW(parse_vnnlib(deep_term), ParseError);
  // Nesting within the limit still parses.
  std::string ok = std::string(kTwoInputs) + "(assert ";
  for (int i = 0; i < 100; ++i) ok += "(and ";
  ok += "(<= Y_0 1)" + std::string(100, ')') + ")";
  EXPECT_EQ(parse_vnnlib(ok).cases.size(), 1u);
}

// Many asserts on one conjunction (every VNN-COMP file) used to copy the conjunction per
// assert; the result must be unchanged by appending in place.
TEST(ParserFuzz, VnnlibManyAssertsKeepEveryBound) {
  std::string text;
  const int n = 2000;
  for (int i = 0; i < n; ++i) text += "(declare-const X_" + std::to_string(i) + " Real)\n";
  text += "(declare-const Y_0 Real)\n";
  for (int i = 0; i < n; ++i)
    text += "(assert (>= X_" + std::to_string(i) + " " + std::to_string(-i) + "))\n(assert (<= X_" +
            std::to_string(i) + " " + std::to_string(i) + "))\n";
  text += "(assert (or (and (<= Y_0 0)) (and (>= Y_0 5))))\n";
  Property p = parse_vnnlib(text);
  ASSERT_EQ(p.cases.size(), 1u);
  ASSERT_EQ(p.cases[0].disjuncts.size(), 2u);
  at::Tensor expect = at::arange(n, at::kDouble);
  EXPECT_TRUE(at::equal(p.cases[0].upper, expect));
  EXPECT_TRUE(at::equal(p.cases[0].lower, -expect));
}

// yaml-cpp's BadSubscript / TypedBadConversion escaped parse_verify_config.
TEST(ParserFuzz, VerifyConfigNotAMappingIsInvalidInput) {
  EXPECT_THROW(parse_verify_config(read_file(fs::path(TESSERA_SOURCE_DIR) / "fuzz/regressions/verify_config/scalar_root.yaml")),
               InvalidInput);
  EXPECT_THROW(parse_verify_config("just a scalar"), InvalidInput);
  EXPECT_THROW(parse_verify_config("- a\n- b\n"), InvalidInput);
  EXPECT_THROW(parse_verify_config("{[1, 2]: 3}"), InvalidInput);
  EXPECT_THROW(parse_verify_config("bab: {[1, 2]: 3}"), InvalidInput);
  EXPECT_EQ(parse_verify_config("timeout: 7").timeout, 7);
}

// A node folded from constants read inputs it does not have (std::out_of_range from
// vector::at), and shapes that do not fit the operator failed inside LibTorch (c10::Error).
TEST(ParserFuzz, OnnxMalformedConstantNodeIsParseError) {
  {
    OnnxBuilder b("x", {1, 2});
    std::string bad = b.node("Add", {});
    b.set_output(b.node("Relu", {b.input()}));
    EXPECT_THROW(load_onnx_bytes(b.bytes()), ParseError);
  }
  {
    OnnxBuilder b("x", {1, 6});
    std::string shape = b.constant("shape", at::tensor({4}, at::kLong));
    std::string w = b.constant("w", at::arange(6, at::kDouble));
    std::string bad = b.node("Reshape", {w, shape});
    b.set_output(b.node("Add", {b.input(), bad}));
    try {
      load_onnx_bytes(b.bytes());
      FAIL() << "no error";
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find("(Reshape) cannot be loaded"), std::string::npos) << e.what();
    }
  }
}

// An initializer with zero elements and empty raw_data passed a null pointer to memcpy
// (undefined behaviour, reported by UBSan under fuzzing).
TEST(ParserFuzz, OnnxEmptyRawInitializerLoads) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  onnx::ValueInfoProto* in = g->add_input();
  in->set_name("x");
  auto* shape = in->mutable_type()->mutable_tensor_type();
  shape->set_elem_type(onnx::TensorProto::FLOAT);
  shape->mutable_shape()->add_dim()->set_dim_value(2);
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(0);
  w->set_raw_data("");
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("Shape");
  n->add_input("w");
  n->add_output("s");
  onnx::NodeProto* r = g->add_node();
  r->set_op_type("Relu");
  r->add_input("x");
  r->add_output("y");
  g->add_output()->set_name("y");
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  Graph graph = load_onnx_bytes(bytes);
  EXPECT_EQ(graph.nodes().size(), 2u);  // the input and the ReLU; the Shape was folded
}

}  // namespace
}  // namespace tessera::lirpa
