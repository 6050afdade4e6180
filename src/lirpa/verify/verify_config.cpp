// YAML configuration of `tessera verify` into typed VerifyOptions. Every key is optional;
// an unknown key or a value of the wrong type is an InvalidInput naming the key and line.

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "tessera/core/error.h"
#include "tessera/lirpa/verify_options.h"

namespace tessera::lirpa {
namespace {

using Setter = std::function<void(const YAML::Node&)>;

struct Reader {
  std::string source;

  std::string where(const YAML::Node& n) const {
    return source + ":" + std::to_string(n.Mark().line + 1);
  }

  template <class T>
  Setter set(T& field, const std::string& key) const {
    return [this, &field, key](const YAML::Node& n) {
      try {
        field = n.as<T>();
      } catch (const YAML::Exception&) {
        TESSERA_THROW(InvalidInput, where(n), ": bad value for '", key, "'");
      }
    };
  }

  // Applies `setters` to the keys of the map `n`; other keys are an error.
  void read_map(const YAML::Node& n, const std::string& section, const std::map<std::string, Setter>& setters) const {
    if (!n || n.IsNull()) return;
    TESSERA_CHECK(n.IsMap(), InvalidInput, where(n), ": '", section, "' must be a mapping");
    for (const auto& kv : n) {
      TESSERA_CHECK(kv.first.IsScalar(), InvalidInput, where(kv.first), ": a key in ", section, " must be a name");
      std::string key = kv.first.as<std::string>();
      auto it = setters.find(key);
      if (it == setters.end()) {
        std::string known;
        for (const auto& [k, _] : setters) known += (known.empty() ? "" : ", ") + k;
        TESSERA_THROW(InvalidInput, where(kv.first), ": unknown key '", key, "' in ", section, " (known: ", known, ")");
      }
      it->second(kv.second);
    }
  }
};

std::string r_where(const YAML::Node& n, const std::string& source) {
  return source + ":" + std::to_string(n.Mark().line + 1);
}

SplitKind parse_split(const std::string& s, const std::string& where) {
  if (s == "auto") return SplitKind::Auto;
  if (s == "input") return SplitKind::Input;
  if (s == "relu") return SplitKind::Relu;
  TESSERA_THROW(InvalidInput, where, ": bab.split must be auto, input or relu, not '", s, "'");
}

ReluBranching parse_branching(const std::string& s, const std::string& where) {
  if (s == "babsr") return ReluBranching::BaBSR;
  if (s == "fsb") return ReluBranching::FSB;
  TESSERA_THROW(InvalidInput, where, ": bab.branching must be babsr or fsb, not '", s, "'");
}

void check_ranges(const VerifyOptions& o, const std::string& source) {
  TESSERA_CHECK(o.timeout > 0, InvalidInput, source, ": timeout must be positive");
  TESSERA_CHECK(o.attack.restarts >= 1 && o.attack.steps >= 0, InvalidInput, source,
                ": attack.restarts must be >= 1 and attack.steps >= 0");
  TESSERA_CHECK(o.alpha.iterations >= 0 && o.beta.iterations >= 0, InvalidInput, source,
                ": iterations must be >= 0");
  TESSERA_CHECK(o.bab.batch_size >= 0 && o.bab.attack_every >= 0, InvalidInput, source,
                ": bab.batch_size and bab.attack_every must be >= 0");
  TESSERA_CHECK(o.bab.fsb_topk >= 1, InvalidInput, source, ": bab.fsb_topk must be >= 1");
  TESSERA_CHECK(o.bab.inherit_max_bytes >= 0, InvalidInput, source, ": bab.inherit_max_bytes must be >= 0");
  TESSERA_CHECK(o.margin >= 0, InvalidInput, source, ": margin must be >= 0");
  TESSERA_CHECK(o.bab.input_alpha_band >= 0 && o.bab.input_alpha_iterations >= 0, InvalidInput, source,
                ": bab.input_alpha_band and bab.input_alpha_iterations must be >= 0");
  TESSERA_CHECK(o.bab.input_relu_share >= 0, InvalidInput, source, ": bab.input_relu_share must be >= 0");
  TESSERA_CHECK(o.bab.input_relu_beta_iterations >= 0, InvalidInput, source,
                ": bab.input_relu_beta_iterations must be >= 0");
  const InputSplitTuning& in = o.bab.input;
  TESSERA_CHECK(in.candidates >= 1 && in.portfolio_candidates >= 1 && in.hand_off_boxes >= 1 &&
                    in.hand_off_domains >= 1 && in.best_first_every >= 1,
                InvalidInput, source,
                ": bab.input.candidates, portfolio_candidates, hand_off_boxes, hand_off_domains and "
                "best_first_every must be >= 1");
  TESSERA_CHECK(in.thin_ratio >= 0 && in.stall_ratio >= 0 && in.point_width >= 0 && in.negligible_smear >= 0 &&
                    in.relu_domain_work >= 0 && in.local_attack_boxes >= 0 && in.local_attack_steps >= 0,
                InvalidInput, source, ": the bab.input ratios, widths, work and attack sizes must be >= 0");
  TESSERA_CHECK(in.children_per_second > 0 && in.max_batch_seconds > 0 && in.max_pool_bytes > 0 &&
                    in.batch_work_min > 0 && in.batch_work_min <= in.batch_work_max,
                InvalidInput, source,
                ": bab.input.children_per_second, max_batch_seconds, max_pool_bytes must be positive and "
                "0 < batch_work_min <= batch_work_max");
}

}  // namespace

VerifyOptions parse_verify_config(const std::string& yaml, const std::string& source) {
  VerifyOptions o;
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    TESSERA_THROW(ParseError, source, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg);
  }
  if (!root || root.IsNull()) return o;
  // operator[] on a scalar or a sequence throws YAML::BadSubscript: check the shape first.
  TESSERA_CHECK(root.IsMap(), InvalidInput, r_where(root, source), ": the configuration must be a mapping of keys");
  Reader r{source};
  std::string split, branching;
  r.read_map(root["attack"], "attack",
             {{"enabled", r.set(o.attack.enabled, "attack.enabled")},
              {"restarts", r.set(o.attack.restarts, "attack.restarts")},
              {"steps", r.set(o.attack.steps, "attack.steps")},
              {"step", r.set(o.attack.step, "attack.step")},
              {"seed", r.set(o.attack.seed, "attack.seed")}});
  r.read_map(root["alpha"], "alpha",
             {{"enabled", r.set(o.alpha_enabled, "alpha.enabled")},
              {"iterations", r.set(o.alpha.iterations, "alpha.iterations")},
              {"intermediate", r.set(o.alpha.intermediate, "alpha.intermediate")},
              {"lr", r.set(o.alpha.lr, "alpha.lr")},
              {"lr_decay", r.set(o.alpha.lr_decay, "alpha.lr_decay")},
              {"early_stop_patience", r.set(o.alpha.early_stop_patience, "alpha.early_stop_patience")}});
  r.read_map(root["beta"], "beta",
             {{"iterations", r.set(o.beta.iterations, "beta.iterations")},
              {"lr_alpha", r.set(o.beta.lr_alpha, "beta.lr_alpha")},
              {"lr_beta", r.set(o.beta.lr_beta, "beta.lr_beta")},
              {"lr_decay", r.set(o.beta.lr_decay, "beta.lr_decay")},
              {"float32_steps", r.set(o.beta.float32_steps, "beta.float32_steps")}});
  r.read_map(root["bab"], "bab",
             {{"enabled", r.set(o.bab.enabled, "bab.enabled")},
              {"split", r.set(split, "bab.split")},
              {"branching", r.set(branching, "bab.branching")},
              {"input_split_max_dims", r.set(o.bab.input_split_max_dims, "bab.input_split_max_dims")},
              {"fsb_topk", r.set(o.bab.fsb_topk, "bab.fsb_topk")},
              {"batch_size", r.set(o.bab.batch_size, "bab.batch_size")},
              {"attack_every", r.set(o.bab.attack_every, "bab.attack_every")},
              {"input_portfolio_after", r.set(o.bab.input_portfolio_after, "bab.input_portfolio_after")},
              {"input_alpha_band", r.set(o.bab.input_alpha_band, "bab.input_alpha_band")},
              {"input_alpha_iterations", r.set(o.bab.input_alpha_iterations, "bab.input_alpha_iterations")},
              {"input_relu_share", r.set(o.bab.input_relu_share, "bab.input_relu_share")},
              {"input_relu_beta_iterations", r.set(o.bab.input_relu_beta_iterations, "bab.input_relu_beta_iterations")},
              {"force_synchronous", r.set(o.bab.force_synchronous, "bab.force_synchronous")},
              {"max_domains", r.set(o.bab.max_domains, "bab.max_domains")},
              {"inherit_max_bytes", r.set(o.bab.inherit_max_bytes, "bab.inherit_max_bytes")},
              {"disjuncts_together", r.set(o.bab.disjuncts_together, "bab.disjuncts_together")},
              {"input", [](const YAML::Node&) {}}});
  InputSplitTuning& in = o.bab.input;
  r.read_map(root["bab"] ? root["bab"]["input"] : YAML::Node(), "bab.input",
             {{"candidates", r.set(in.candidates, "bab.input.candidates")},
              {"portfolio_candidates", r.set(in.portfolio_candidates, "bab.input.portfolio_candidates")},
              {"thin_ratio", r.set(in.thin_ratio, "bab.input.thin_ratio")},
              {"stall_ratio", r.set(in.stall_ratio, "bab.input.stall_ratio")},
              {"point_width", r.set(in.point_width, "bab.input.point_width")},
              {"negligible_smear", r.set(in.negligible_smear, "bab.input.negligible_smear")},
              {"max_pool_bytes", r.set(in.max_pool_bytes, "bab.input.max_pool_bytes")},
              {"children_per_second", r.set(in.children_per_second, "bab.input.children_per_second")},
              {"batch_work_min", r.set(in.batch_work_min, "bab.input.batch_work_min")},
              {"batch_work_max", r.set(in.batch_work_max, "bab.input.batch_work_max")},
              {"max_batch_seconds", r.set(in.max_batch_seconds, "bab.input.max_batch_seconds")},
              {"hand_off_boxes", r.set(in.hand_off_boxes, "bab.input.hand_off_boxes")},
              {"hand_off_domains", r.set(in.hand_off_domains, "bab.input.hand_off_domains")},
              {"relu_domain_work", r.set(in.relu_domain_work, "bab.input.relu_domain_work")},
              {"best_first_every", r.set(in.best_first_every, "bab.input.best_first_every")},
              {"local_attack_boxes", r.set(in.local_attack_boxes, "bab.input.local_attack_boxes")},
              {"local_attack_steps", r.set(in.local_attack_steps, "bab.input.local_attack_steps")}});
  std::map<std::string, Setter> top{{"timeout", r.set(o.timeout, "timeout")},
                                    {"margin", r.set(o.margin, "margin")},
                                    {"attack", [](const YAML::Node&) {}},
                                    {"alpha", [](const YAML::Node&) {}},
                                    {"beta", [](const YAML::Node&) {}},
                                    {"bab", [](const YAML::Node&) {}}};
  r.read_map(root, "the configuration", top);
  if (!split.empty()) o.bab.split = parse_split(split, source);
  if (!branching.empty()) o.bab.branching = parse_branching(branching, source);
  check_ranges(o, source);
  return o;
}

VerifyOptions load_verify_config(const std::string& path) {
  std::ifstream in(path);
  TESSERA_CHECK(in.good(), InvalidInput, "cannot read the configuration file '", path, "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_verify_config(ss.str(), path);
}

std::string split_kind_name(SplitKind k) {
  switch (k) {
    case SplitKind::Auto: return "auto";
    case SplitKind::Input: return "input";
    case SplitKind::Relu: return "relu";
  }
  return "?";
}

std::string relu_branching_name(ReluBranching b) { return b == ReluBranching::BaBSR ? "babsr" : "fsb"; }

}  // namespace tessera::lirpa
