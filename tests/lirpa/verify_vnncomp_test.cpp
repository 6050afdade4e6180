// Verdicts on VNN-COMP 2021 instances: the competition's test instances and a handful of
// fast ACAS Xu instances (sat and unsat) against expected.csv.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/verify.h"

namespace tessera::lirpa {
namespace {

const std::string kData = std::string(TESSERA_SHARED_DATA) + "/vnncomp2021/";

VerifyResult run(const std::string& onnx, const std::string& vnnlib, double timeout) {
  Graph g = load_onnx(kData + onnx);
  Property p = load_vnnlib(kData + vnnlib);
  VerifyOptions o;
  o.timeout = timeout;
  VerifyResult r = verify(g, p, o);
  if (r.verdict == Verdict::Sat) {
    EXPECT_TRUE(check_counterexample(g, p, r.counterexample->x).has_value()) << onnx << " " << vnnlib;
  }
  return r;
}

struct Instance {
  std::string onnx, vnnlib;
  Verdict expected;
};

}  // namespace

TEST(LirpaVnncomp, TestInstancesDecidedCorrectly) {
  // test_sat has a counterexample, test_unsat none (README of the folder); nano, tiny and
  // small: CROWN bounds y in [0, 0.5], [0, 1], [30.5, 78.5] on [-1, 1], below / above their
  // unsafe thresholds (Y_0 <= -1, Y_0 >= 100, Y_0 >= 100): all unsat.
  std::vector<Instance> cases{{"test/test_sat.onnx", "test/test_prop.vnnlib", Verdict::Sat},
                              {"test/test_unsat.onnx", "test/test_prop.vnnlib", Verdict::Unsat},
                              {"test/test_nano.onnx", "test/test_nano.vnnlib", Verdict::Unsat},
                              {"test/test_tiny.onnx", "test/test_tiny.vnnlib", Verdict::Unsat},
                              {"test/test_small.onnx", "test/test_small.vnnlib", Verdict::Unsat}};
  for (const Instance& c : cases) {
    VerifyResult r = run(c.onnx, c.vnnlib, 30);
    EXPECT_EQ(verdict_name(r.verdict), verdict_name(c.expected)) << c.onnx << " " << r.reason;
  }
}

TEST(LirpaVnncomp, AcasXuInstancesMatchExpected) {
  // Instances decided within about a second: two sat (attack), two unsat that neither CROWN
  // nor alpha-CROWN proves, decided by input splitting (7 and 11 sub-domains).
  std::vector<Instance> cases{
      {"acasxu/ACASXU_run2a_2_1_batch_2000.onnx", "acasxu/prop_2.vnnlib", Verdict::Sat},
      {"acasxu/ACASXU_run2a_1_9_batch_2000.onnx", "acasxu/prop_4.vnnlib", Verdict::Sat},
      {"acasxu/ACASXU_run2a_3_1_batch_2000.onnx", "acasxu/prop_4.vnnlib", Verdict::Unsat},
      {"acasxu/ACASXU_run2a_4_4_batch_2000.onnx", "acasxu/prop_4.vnnlib", Verdict::Unsat}};
  for (const Instance& c : cases) {
    VerifyResult r = run(c.onnx, c.vnnlib, 30);
    if (c.expected == Verdict::Sat) EXPECT_NE(r.verdict, Verdict::Unsat);  // never contradicts expected.csv
    if (c.expected == Verdict::Unsat) {
      EXPECT_NE(r.verdict, Verdict::Sat);
      EXPECT_EQ(r.decided_by, "bab-input") << c.onnx << " " << c.vnnlib;  // needs branch and bound
    }
    EXPECT_EQ(verdict_name(r.verdict), verdict_name(c.expected)) << c.onnx << " " << c.vnnlib << " " << r.reason;
    std::printf("%s %s: %s in %.2f s (%s, %lld domains)\n", c.onnx.c_str(), c.vnnlib.c_str(),
                verdict_name(r.verdict).c_str(), r.seconds, r.decided_by.c_str(),
                static_cast<long long>(r.domains_visited));
  }
}

}  // namespace tessera::lirpa
