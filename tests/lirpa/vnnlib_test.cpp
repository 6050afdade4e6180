// VNN-LIB parsing: boxes, output disjunctions, specification matrices and errors.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::lirpa {
namespace {

const std::string kData = std::string(TESSERA_SHARED_DATA) + "/vnncomp2021/";

TEST(LirpaVnnlib, SimpleBoxAndConjunction) {
  Property p = load_vnnlib(kData + "test/test_prop.vnnlib");
  ASSERT_EQ(p.n_inputs, 5);
  ASSERT_EQ(p.n_outputs, 5);
  ASSERT_EQ(p.cases.size(), 1u);
  EXPECT_DOUBLE_EQ(p.cases[0].lower[0].item<double>(), -0.30353115613746867);
  EXPECT_DOUBLE_EQ(p.cases[0].upper[2].item<double>(), 0.49999999998567607);
  ASSERT_EQ(p.cases[0].disjuncts.size(), 1u);
  // (<= Y_0 Y_1): Y_0 - Y_1 <= 0
  at::Tensor c = p.cases[0].spec_matrix();
  ASSERT_EQ(c.sizes(), at::IntArrayRef({4, 5}));
  EXPECT_TRUE(at::equal(c[0], at::tensor({1.0, -1.0, 0.0, 0.0, 0.0}, at::kDouble)));
  EXPECT_EQ(p.cases[0].spec_rhs().abs().sum().item<double>(), 0.0);
}

TEST(LirpaVnnlib, DisjunctionOfBoxesAndOutputs) {
  Property p = load_vnnlib(kData + "acasxu/prop_6.vnnlib");
  ASSERT_EQ(p.cases.size(), 2u);
  for (const auto& c : p.cases) EXPECT_EQ(c.disjuncts.size(), 4u);
  EXPECT_NEAR(p.cases[0].lower[1].item<double>(), 0.11140846, 1e-15);
  EXPECT_NEAR(p.cases[1].upper[1].item<double>(), -0.11140846, 1e-15);
}

TEST(LirpaVnnlib, MixedInputAndOutputConjunction) {
  Property p = load_vnnlib(kData + "test/test_small.vnnlib");
  ASSERT_EQ(p.cases.size(), 1u);
  // (>= Y_0 100): -Y_0 <= -100
  EXPECT_DOUBLE_EQ(p.cases[0].spec_matrix().item<double>(), -1.0);
  EXPECT_DOUBLE_EQ(p.cases[0].spec_rhs().item<double>(), -100.0);
}

TEST(LirpaVnnlib, CommentsScientificNotationAndLinearTerms) {
  Property p = parse_vnnlib(R"(; header
(declare-const X_0 Real) (declare-const Y_0 Real) (declare-const Y_1 Real)
(assert (>= X_0 -1.5e-1)) (assert (<= X_0 2E0)) ; trailing comment
(assert (<= (+ Y_0 (* 2 Y_1)) 3)))");
  EXPECT_DOUBLE_EQ(p.cases[0].lower[0].item<double>(), -0.15);
  EXPECT_DOUBLE_EQ(p.cases[0].upper[0].item<double>(), 2.0);
  EXPECT_TRUE(at::equal(p.cases[0].spec_matrix(), at::tensor({1.0, 2.0}, at::kDouble).reshape({1, 2})));
  EXPECT_DOUBLE_EQ(p.cases[0].spec_rhs().item<double>(), 3.0);
}

void expect_parse_error(const std::string& text, const std::string& where) {
  try {
    parse_vnnlib(text, "p.vnnlib");
    FAIL() << "no error for: " << text;
  } catch (const ParseError& e) {
    EXPECT_NE(e.message().find("p.vnnlib:" + where), std::string::npos) << e.message();
  }
}

TEST(LirpaVnnlib, EmptyInputBoxIsDroppedWithAWarningNamingTheVariable) {
  const std::string text =
      "(declare-const X_0 Real)(declare-const X_1 Real)(declare-const Y_0 Real)\n"
      "(assert (or (and (>= X_0 0.5) (<= X_0 0.25) (>= X_1 0) (<= X_1 1))\n"
      "            (and (>= X_0 0) (<= X_0 1) (>= X_1 0) (<= X_1 1))))\n"
      "(assert (<= Y_0 0))\n";
  Property p = parse_vnnlib(text, "box.vnnlib");
  ASSERT_EQ(p.cases.size(), 1u);  // the empty box is gone, the other stays
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("box.vnnlib: input X_0 has lower bound 0.5 above its upper bound 0.25"),
            std::string::npos) << p.warnings[0];
  EXPECT_TRUE(load_vnnlib(kData + "test/test_prop.vnnlib").warnings.empty());
}

TEST(LirpaVnnlib, MalformedInputGivesLineAndColumn) {
  expect_parse_error("(declare-const X_0 Real)\n(assert (<= X_0 1)", "2:19");
  expect_parse_error("(declare-const X_0 Real)\n  (assert (foo X_0 1))", "2:12");
  expect_parse_error("(declare-const X_0 Int)", "1:20");
  expect_parse_error("(declare-const X_0 Real)(declare-const Y_0 Real)\n(assert (<= X_0 1.2.3))", "2:17");
  expect_parse_error("(declare-const X_0 Real)(declare-const Y_0 Real)(assert (<= X_0 1))", "");  // no lower bound
  expect_parse_error("(declare-const X_0 Real)(declare-const Y_0 Real)(assert (<= X_0 1)) (assert (>= X_0 0)) #",
                     "1:");
}

TEST(LirpaVnnlib, ShapeMismatchBetweenModelAndProperty) {
  Property p = load_vnnlib(kData + "acasxu/prop_1.vnnlib");  // 5 inputs, 5 outputs
  EXPECT_NO_THROW(check_property_sizes(p, 5, 5, "acas"));
  try {
    check_property_sizes(p, 784, 10, "prop_1 on mnist");
    FAIL() << "no error";
  } catch (const DimensionMismatch& e) {
    EXPECT_NE(e.message().find("5 inputs and 5 outputs but the network has 784 and 10"), std::string::npos)
        << e.message();
  }
}

}  // namespace
}  // namespace tessera::lirpa
