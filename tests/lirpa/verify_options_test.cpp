// YAML configuration of `tessera verify`.

#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/lirpa/verify_options.h"

namespace tessera::lirpa {

TEST(VerifyOptions, DefaultsWhenEmpty) {
  VerifyOptions o = parse_verify_config("");
  EXPECT_EQ(o.timeout, 300);
  EXPECT_FALSE(o.bab.force_synchronous);
  EXPECT_EQ(o.bab.split, SplitKind::Auto);
  EXPECT_EQ(o.bab.input_portfolio_after, 3);
  EXPECT_EQ(o.bab.input_alpha_band, 0.03);
  EXPECT_EQ(o.bab.input_alpha_iterations, 20);
  EXPECT_EQ(o.bab.input_relu_share, 3);
  EXPECT_EQ(o.beta.iterations, 10);                  // ReLU splitting's own batches
  EXPECT_EQ(o.bab.input_relu_beta_iterations, 20);   // input splitting's hand-offs
}

TEST(VerifyOptions, ReadsEveryKey) {
  VerifyOptions o = parse_verify_config(
      "timeout: 12.5\nmargin: 0.001\n"
      "attack: {enabled: false, restarts: 7, steps: 9, step: 0.5, seed: 3}\n"
      "alpha: {enabled: false, iterations: 5, intermediate: false, lr: 0.2, lr_decay: 0.9, early_stop_patience: 4}\n"
      "beta: {iterations: 6, lr_alpha: 0.3, lr_beta: 0.4, lr_decay: 0.7, float32_steps: false}\n"
      "bab:\n  split: relu\n  branching: fsb\n  batch_size: 32\n  force_synchronous: true\n"
      "  attack_every: 3\n  input_split_max_dims: 2\n  max_domains: 100\n  inherit_max_bytes: 4096\n  enabled: true\n"
      "  input_portfolio_after: -1\n  input_alpha_band: 0.5\n  input_alpha_iterations: 7\n"
      "  input_relu_share: 0.25\n  input_relu_beta_iterations: 9\n  disjuncts_together: false\n");
  EXPECT_EQ(o.timeout, 12.5);
  EXPECT_EQ(o.margin, 0.001);
  EXPECT_FALSE(o.attack.enabled);
  EXPECT_EQ(o.attack.restarts, 7);
  EXPECT_EQ(o.attack.steps, 9);
  EXPECT_EQ(o.attack.seed, 3u);
  EXPECT_FALSE(o.alpha_enabled);
  EXPECT_EQ(o.alpha.iterations, 5);
  EXPECT_EQ(o.alpha.early_stop_patience, 4);
  EXPECT_FALSE(o.alpha.intermediate);
  EXPECT_EQ(o.beta.iterations, 6);
  EXPECT_EQ(o.beta.lr_beta, 0.4);
  EXPECT_EQ(o.bab.split, SplitKind::Relu);
  EXPECT_EQ(o.bab.branching, ReluBranching::FSB);
  EXPECT_EQ(o.bab.batch_size, 32);
  EXPECT_TRUE(o.bab.force_synchronous);
  EXPECT_EQ(o.bab.attack_every, 3);
  EXPECT_EQ(o.bab.input_split_max_dims, 2);
  EXPECT_EQ(o.bab.max_domains, 100);
  EXPECT_EQ(o.bab.inherit_max_bytes, 4096);
  EXPECT_EQ(o.bab.input_portfolio_after, -1);
  EXPECT_EQ(o.bab.input_alpha_band, 0.5);
  EXPECT_EQ(o.bab.input_alpha_iterations, 7);
  EXPECT_EQ(o.bab.input_relu_share, 0.25);
  EXPECT_EQ(o.bab.input_relu_beta_iterations, 9);
  EXPECT_FALSE(o.bab.disjuncts_together);
  EXPECT_FALSE(o.beta.float32_steps);
}

TEST(VerifyOptions, ReadsInputSplittingTuning) {
  InputSplitTuning d;  // the defaults stay when a key is absent
  InputSplitTuning t = parse_verify_config("bab: {input: {candidates: 3, thin_ratio: 0.5}}\n").bab.input;
  EXPECT_EQ(t.candidates, 3);
  EXPECT_EQ(t.thin_ratio, 0.5);
  EXPECT_EQ(t.portfolio_candidates, d.portfolio_candidates);
  t = parse_verify_config(
          "bab:\n  input:\n    portfolio_candidates: 4\n    stall_ratio: 0.02\n    point_width: 1.0e-6\n"
          "    negligible_smear: 0.01\n    max_pool_bytes: 1048576\n    children_per_second: 2000\n"
          "    batch_work_min: 0.1\n    batch_work_max: 0.4\n    max_batch_seconds: 2\n    hand_off_boxes: 8\n"
          "    hand_off_domains: 16\n    relu_domain_work: 3\n    best_first_every: 2\n"
          "    local_attack_boxes: 5\n    local_attack_steps: 6\n")
          .bab.input;
  EXPECT_EQ(t.portfolio_candidates, 4);
  EXPECT_EQ(t.stall_ratio, 0.02);
  EXPECT_EQ(t.point_width, 1e-6);
  EXPECT_EQ(t.negligible_smear, 0.01);
  EXPECT_EQ(t.max_pool_bytes, 1048576);
  EXPECT_EQ(t.children_per_second, 2000);
  EXPECT_EQ(t.batch_work_min, 0.1);
  EXPECT_EQ(t.batch_work_max, 0.4);
  EXPECT_EQ(t.max_batch_seconds, 2);
  EXPECT_EQ(t.hand_off_boxes, 8);
  EXPECT_EQ(t.hand_off_domains, 16);
  EXPECT_EQ(t.relu_domain_work, 3);
  EXPECT_EQ(t.best_first_every, 2);
  EXPECT_EQ(t.local_attack_boxes, 5);
  EXPECT_EQ(t.local_attack_steps, 6);
  EXPECT_THROW(parse_verify_config("bab: {input: {candidates: 0}}\n"), InvalidInput);
  EXPECT_THROW(parse_verify_config("bab: {input: {batch_work_min: 0.5, batch_work_max: 0.1}}\n"), InvalidInput);
  EXPECT_THROW(parse_verify_config("bab: {input: {children_per_second: 0}}\n"), InvalidInput);
  EXPECT_THROW(parse_verify_config("bab: {input: {thin: 1}}\n"), InvalidInput);
  EXPECT_THROW(parse_verify_config("bab: {input: 3}\n"), InvalidInput);
}

TEST(VerifyOptions, UnknownKeyNamesKeyAndLine) {
  try {
    parse_verify_config("timeout: 3\nbab:\n  force_sync: true\n", "c.yaml");
    FAIL() << "no error";
  } catch (const InvalidInput& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("force_sync"), std::string::npos) << m;
    EXPECT_NE(m.find("c.yaml:3"), std::string::npos) << m;
  }
}

TEST(VerifyOptions, BadValuesAreErrors) {
  EXPECT_THROW(parse_verify_config("timeout: soon\n"), InvalidInput);
  EXPECT_THROW(parse_verify_config("timeout: -1\n"), InvalidInput);
  EXPECT_THROW(parse_verify_config("bab: {split: sideways}\n"), InvalidInput);
  EXPECT_THROW(parse_verify_config("attack: [1, 2]\n"), InvalidInput);
  EXPECT_THROW(parse_verify_config("timeout: [\n"), ParseError);
  EXPECT_THROW(parse_verify_config("bab: {input_alpha_band: -0.1}\n"), InvalidInput);
  EXPECT_THROW(parse_verify_config("bab: {input_relu_share: -1}\n"), InvalidInput);
  EXPECT_THROW(parse_verify_config("bab: {input_relu_beta_iterations: -1}\n"), InvalidInput);
}

}  // namespace tessera::lirpa
