// The soundness campaign finds nothing on sound bounds (the methods', ReLU splitting's
// domains' and input splitting's boxes'), and reports (with reproducers) whatever crosses a
// bound: checked by demanding more slack than any bound has.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/soundness_campaign.h"

namespace tessera::lirpa {
namespace {

TEST(LirpaSoundnessCampaign, EveryKindOfNetworkIsSound) {
  SoundnessCampaignOptions o;
  o.networks = 7;  // one of each kind
  o.points = 300;
  o.seed = 11;
  o.verify_timeout = 1;
  SoundnessCampaignReport r = run_soundness_campaign(o);
  EXPECT_TRUE(r.violations.empty());
  int64_t verdicts = 0;
  for (const auto& [name, count] : r.verdicts) verdicts += count;
  EXPECT_EQ(verdicts, 7);  // every network verified once
  EXPECT_EQ(r.networks_by_kind.size(), 7u);
  ASSERT_EQ(r.tallies.size(), 3u);
  for (const auto& t : r.tallies) {
    EXPECT_EQ(t.networks, 7);
    EXPECT_GT(t.points, 7 * (300 + 64));  // uniform, vertices and PGD ends
    EXPECT_EQ(t.violations, 0) << method_name(t.method);
    EXPECT_GE(t.min_relative_slack, -o.tolerance) << method_name(t.method);
  }
  EXPECT_EQ(r.alpha_looser_than_crown, 0);
  // ReLU splitting's domains on the five kinds with ReLUs (MLP, CNN, conv chain, residual,
  // attention)
  EXPECT_EQ(r.bab.networks, 5);
  EXPECT_GT(r.bab.domains, 4);
  EXPECT_GT(r.bab.points, 0);
  EXPECT_EQ(r.bab.violations, 0);
  EXPECT_GE(r.bab.min_relative_slack, -o.tolerance);
  // input splitting's boxes on those with at most 16 inputs (the MLP, the residual net)
  EXPECT_GE(r.bab_input.networks, 2);
  EXPECT_GT(r.bab_input.domains, 2 * r.bab_input.networks);
  EXPECT_GT(r.bab_input.points, r.bab_input.domains);
  EXPECT_EQ(r.bab_input.violations, 0);
  EXPECT_GE(r.bab_input.min_relative_slack, -o.tolerance);
}

TEST(LirpaSoundnessCampaign, InputSplittingStopsAtItsBoxBudget) {
  // a budget of one box: each search bounds its root and stops (BabContext::max_visited), and
  // the root is checked (BabContext::observe)
  SoundnessCampaignOptions o;
  o.networks = 7;
  o.points = 50;
  o.methods = {Method::Ibp};
  o.verify_timeout = 0;
  o.bab_domains = 1;
  SoundnessCampaignReport r = run_soundness_campaign(o);
  EXPECT_TRUE(r.violations.empty());
  EXPECT_GE(r.bab_input.networks, 2);
  EXPECT_EQ(r.bab_input.domains, r.bab_input.networks);
}

/// Network 0 (a ReLU MLP), 100 points, `method`'s bounds and `bab_domains` domains, no
/// verification, and a tolerance of -1e6 that asks every bound for a slack of 10^6
/// (relative): each check "fails". Reproducers go to the emptied TempDir()/`name`.
SoundnessCampaignOptions failing_everywhere(const std::string& name, Method method, int64_t bab_domains) {
  SoundnessCampaignOptions o;
  o.networks = 1;
  o.points = 100;
  o.methods = {method};
  o.tolerance = -1e6;
  o.verify_timeout = 0;
  o.bab_domains = bab_domains;
  o.reproducer_dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(o.reproducer_dir);
  return o;
}

TEST(LirpaSoundnessCampaign, ViolationsAreReportedWithReproducers) {
  const SoundnessCampaignOptions o = failing_everywhere("tessera_soundness_reproducers", Method::Crown, 0);
  SoundnessCampaignReport r = run_soundness_campaign(o);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.tallies[0].violations, static_cast<int64_t>(r.violations.size()));
  EXPECT_EQ(r.violations.size() % 2, 0u);  // both sides of every output
  const SoundnessViolation& v = r.violations[0];
  EXPECT_EQ(v.kind, "mlp_Relu");
  ASSERT_TRUE(std::filesystem::exists(v.reproducer)) << v.reproducer;
  std::stringstream json;
  json << std::ifstream(v.reproducer).rdbuf();
  for (const char* key : {"\"box_lower\"", "\"box_upper\"", "\"point\"", "\"method\":\"crown\"", "\"seed\":0"})
    EXPECT_NE(json.str().find(key), std::string::npos) << key << " in " << json.str();
  const std::string model = v.reproducer.substr(0, v.reproducer.size() - 5) + ".onnx";
  EXPECT_NO_THROW(load_onnx(model));
  std::filesystem::remove_all(o.reproducer_dir);
}

TEST(LirpaSoundnessCampaign, BranchAndBoundDomainsCrossingTheirBoundsAreReported) {
  // every domain holding sampled points fails too, and every box of input splitting (the MLP
  // has at most 8 inputs)
  const SoundnessCampaignOptions o = failing_everywhere("tessera_soundness_bab_reproducers", Method::Ibp, 8);
  SoundnessCampaignReport r = run_soundness_campaign(o);
  EXPECT_EQ(r.tallies[0].violations + r.bab.violations + r.bab_input.violations,
            static_cast<int64_t>(r.violations.size()));
  ASSERT_GT(r.bab.violations, 0);
  ASSERT_GT(r.bab_input.violations, 0);
  EXPECT_GE(r.bab_input.violations, r.bab_input.domains);  // the property's bound of each box, at least
  for (const std::string check : {"bab-domain", "bab-input-box"}) {
    const auto v = std::find_if(r.violations.begin(), r.violations.end(),
                                [&](const SoundnessViolation& x) { return x.check == check; });
    ASSERT_NE(v, r.violations.end()) << check;
    const char* where = check == "bab-domain" ? "of ReLU splitting" : "of input splitting";
    EXPECT_NE(v->message.find(where), std::string::npos) << v->message;
    EXPECT_TRUE(std::filesystem::exists(v->reproducer)) << v->reproducer;
  }
  std::filesystem::remove_all(o.reproducer_dir);
}

}  // namespace
}  // namespace tessera::lirpa
