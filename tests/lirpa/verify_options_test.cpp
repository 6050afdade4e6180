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
}

TEST(VerifyOptions, ReadsEveryKey) {
  VerifyOptions o = parse_verify_config(
      "timeout: 12.5\nmargin: 0.001\n"
      "attack: {enabled: false, restarts: 7, steps: 9, step: 0.5, seed: 3}\n"
      "alpha: {enabled: false, iterations: 5, lr: 0.2, lr_decay: 0.9, early_stop_patience: 4}\n"
      "beta: {iterations: 6, lr_alpha: 0.3, lr_beta: 0.4, lr_decay: 0.7}\n"
      "bab:\n  split: relu\n  branching: fsb\n  batch_size: 32\n  force_synchronous: true\n"
      "  attack_every: 3\n  input_split_max_dims: 2\n  max_domains: 100\n  enabled: true\n"
      "  input_portfolio_after: -1\n  input_alpha_band: 0.5\n  input_alpha_iterations: 7\n"
      "  input_relu_share: 0.25\n");
  EXPECT_EQ(o.timeout, 12.5);
  EXPECT_EQ(o.margin, 0.001);
  EXPECT_FALSE(o.attack.enabled);
  EXPECT_EQ(o.attack.restarts, 7);
  EXPECT_EQ(o.attack.steps, 9);
  EXPECT_EQ(o.attack.seed, 3u);
  EXPECT_FALSE(o.alpha_enabled);
  EXPECT_EQ(o.alpha.iterations, 5);
  EXPECT_EQ(o.alpha.early_stop_patience, 4);
  EXPECT_EQ(o.beta.iterations, 6);
  EXPECT_EQ(o.beta.lr_beta, 0.4);
  EXPECT_EQ(o.bab.split, SplitKind::Relu);
  EXPECT_EQ(o.bab.branching, ReluBranching::FSB);
  EXPECT_EQ(o.bab.batch_size, 32);
  EXPECT_TRUE(o.bab.force_synchronous);
  EXPECT_EQ(o.bab.attack_every, 3);
  EXPECT_EQ(o.bab.input_split_max_dims, 2);
  EXPECT_EQ(o.bab.max_domains, 100);
  EXPECT_EQ(o.bab.input_portfolio_after, -1);
  EXPECT_EQ(o.bab.input_alpha_band, 0.5);
  EXPECT_EQ(o.bab.input_alpha_iterations, 7);
  EXPECT_EQ(o.bab.input_relu_share, 0.25);
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
}

}  // namespace tessera::lirpa
