// `tessera bench soundness`: the soundness campaign (random networks and boxes, every
// method's bounds against sampled points, vertices and PGD; each network's verdict on a
// random property cross-checked; ReLU splitting's domains against the sampled points). One
// JSON line per method, one for ReLU splitting's domains and a summary line; exit code 1
// when any bound is violated or any verdict is wrong (reproducers in --reproducers).

#include <ATen/Parallel.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "commands.h"
#include "tessera/lirpa/soundness_campaign.h"

namespace tessera::app {
namespace {

struct BenchSoundnessOptions {
  lirpa::SoundnessCampaignOptions campaign;
  std::vector<std::string> methods = {"ibp", "crown", "alpha-crown"};
  bool progress = false;
};

int run_bench_soundness(BenchSoundnessOptions& o) {
  o.campaign.methods.clear();
  for (const auto& m : o.methods) o.campaign.methods.push_back(lirpa::parse_method(m));
  std::function<void(int64_t)> progress;
  if (o.progress) {
    progress = [&](int64_t i) {
      if ((i + 1) % 100 == 0) std::cerr << "soundness: " << (i + 1) << " of " << o.campaign.networks << " networks\n";
    };
  }
  lirpa::SoundnessCampaignReport r = lirpa::run_soundness_campaign(o.campaign, progress);
  int64_t violations = 0;
  for (const auto& v : r.violations) violations += v.check != "bound";  // wrong verdicts, domains' bounds
  for (const auto& t : r.tallies) {
    violations += t.violations;
    std::cout << nlohmann::json{{"bench", "soundness"},
                                {"method", lirpa::method_name(t.method)},
                                {"networks", t.networks},
                                {"points", t.points},
                                {"violations", t.violations},
                                {"min_relative_slack", t.min_relative_slack}}
                     .dump()
              << std::endl;
  }
  for (const auto& [check, t] : {std::pair{"bab-domains", &r.bab}, std::pair{"bab-input-boxes", &r.bab_input}}) {
    std::cout << nlohmann::json{{"bench", "soundness"},
                                {"check", check},
                                {"networks", t->networks},
                                {"domains", t->domains},
                                {"points", t->points},
                                {"violations", t->violations},
                                {"min_relative_slack", t->min_relative_slack}}
                     .dump()
              << std::endl;
  }
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& v : r.violations) {
    failures.push_back({{"network", v.network}, {"kind", v.kind}, {"check", v.check},
                        {"method", lirpa::method_name(v.method)},
                        {"output", v.output}, {"side", v.lower_side ? "lower" : "upper"}, {"bound", v.bound},
                        {"value", v.value}, {"reproducer", v.reproducer}, {"message", v.message}});
  }
  std::cout << nlohmann::json{{"bench", "soundness"},
                              {"summary", true},
                              {"networks", o.campaign.networks},
                              {"uniform_points_per_network", o.campaign.points},
                              {"seed", o.campaign.seed},
                              {"networks_by_kind", r.networks_by_kind},
                              {"violations", violations},
                              {"alpha_looser_than_crown", r.alpha_looser_than_crown},
                              {"verify_timeout", o.campaign.verify_timeout},
                              {"verdicts", r.verdicts},
                              {"failures", failures},
                              {"threads", at::get_num_threads()},
                              {"seconds", r.seconds}}
                   .dump()
            << std::endl;
  return violations == 0 ? 0 : 1;
}

}  // namespace

void add_bench_soundness(CLI::App& bench, CommandBody& body) {
  auto o = std::make_shared<BenchSoundnessOptions>();
  o->campaign.reproducer_dir = "soundness_reproducers";
  CLI::App* cmd = bench.add_subcommand(
      "soundness", "random networks and boxes: every bound checked against sampled points and PGD");
  cmd->add_option("--networks", o->campaign.networks, "random networks (each with its own box)")->check(kNonNegative);
  cmd->add_option("--points", o->campaign.points, "uniform samples per network (plus vertices and PGD)")
      ->check(kNonNegative);
  cmd->add_option("--pgd-starts", o->campaign.pgd_starts, "PGD runs per output and side")->check(kNonNegative);
  cmd->add_option("--seed", o->campaign.seed, "network i uses seed * 1000003 + i");
  cmd->add_option("--methods", o->methods, "methods to check")
      ->delimiter(',')
      ->check(CLI::IsMember({"ibp", "crown", "alpha-crown"}));
  cmd->add_option("--verify-timeout", o->campaign.verify_timeout,
                  "seconds to verify each network's random property (0: bounds only)")
      ->check(kNonNegative);
  cmd->add_option("--bab-domains", o->campaign.bab_domains,
                  "ReLU splitting's domains, and input splitting's boxes, checked per network with ReLUs (0: none)")
      ->check(kNonNegative);
  cmd->add_option("--reproducers", o->campaign.reproducer_dir, "folder for violations (model + JSON)");
  cmd->add_flag("--progress", o->progress, "a line on standard error every 100 networks");
  cmd->callback([o, &body] { body = [o] { return run_bench_soundness(*o); }; });
}

}  // namespace tessera::app
