#pragma once
/// @file soundness_campaign.h
/// A search for unsound bounds and wrong verdicts: many random networks (ReLU, sigmoid and
/// tanh MLPs, CNNs with pooling and BatchNorm, convolution chains, residual nets, attention
/// blocks) on random input boxes of widths from 1e-3 to 1; every method's bounds are checked
/// against uniformly sampled points, the box's vertices and PGD runs towards each output's
/// minimum and maximum. Each network is also verified (`verify`) against a random property
/// "y_j <= t" with t near the sampled minimum; an `unsat` is cross-checked by a stronger
/// float64 PGD attack than verification's own (more restarts and steps), a `sat` by
/// re-evaluating its counterexample. On every network with ReLUs, ReLU splitting (the search
/// `verify` runs) is run on such a property for `bab_domains` domains, and every domain's
/// bounds as it is bounded (each ReLU input's and the property row's) are checked against the
/// sampled points that take the signs of the domain's splits. On networks with ReLUs and at
/// most 16 inputs (where `verify` splits inputs), input splitting is run on such a property
/// for `bab_domains` boxes, and every box's bounds (the property's and each ReLU input's) are
/// checked at points drawn inside it, its minimising vertex and a PGD end. A violation is
/// written out as a reproducer (the ONNX model and a JSON file with the box, the check, the
/// bound and the point; a VNN-LIB file for a verdict). `tessera bench soundness` runs it.
///
/// @code
///   SoundnessCampaignOptions o;  o.networks = 1000;  o.points = 1000;
///   SoundnessCampaignReport r = run_soundness_campaign(o);   // r.violations empty when sound
/// @endcode

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tessera/lirpa/bounds.h"

namespace tessera::lirpa {

struct SoundnessCampaignOptions {
  int64_t networks = 1000;  ///< random networks, each with its own box
  int64_t points = 1000;    ///< uniform samples per network (plus 64 vertices and the PGD points)
  int pgd_starts = 4;       ///< PGD runs towards each output's minimum and maximum
  int pgd_steps = 20;
  uint64_t seed = 0;        ///< network i draws from at::manual_seed(seed * 1000003 + i)
  std::vector<Method> methods = {Method::Ibp, Method::Crown, Method::AlphaCrown};
  double tolerance = 1e-9;  ///< a bound may miss a point by this times (1 + max |y|) (rounding)
  std::string reproducer_dir;  ///< where violations are written ("": not written)
  double verify_timeout = 2;   ///< seconds for each network's `verify` (0: no verification)
  int cross_check_restarts = 256;  ///< PGD restarts of the attack that checks an `unsat`
  int cross_check_steps = 200;
  /// ReLU splitting's domains, and input splitting's boxes, checked per network (0: none)
  int64_t bab_domains = 200;
};

/// One method's totals.
struct SoundnessTally {
  Method method = Method::Crown;
  int64_t networks = 0;
  int64_t points = 0;      ///< points checked against this method's bounds
  int64_t violations = 0;  ///< (network, output, side) whose bound a point crosses
  /// The smallest slack (bound minus the extreme point value, lower side; the reverse for the
  /// upper side) over all checks, relative to 1 + max |y|: negative beyond -tolerance is a
  /// violation, near 0 means a bound the points touch.
  double min_relative_slack = 1e300;
};

/// The totals of branch and bound's domains (ReLU splitting's, or input splitting's boxes).
struct SoundnessBabTally {
  int64_t networks = 0;
  int64_t domains = 0;     ///< domains (boxes) bounded and checked
  int64_t points = 0;      ///< (domain, point in it) pairs checked
  int64_t violations = 0;  ///< domains whose bounds a point crosses (or called infeasible with points in them)
  double min_relative_slack = 1e300;  ///< as SoundnessTally's, over the row's and the ReLU inputs' bounds
};

struct SoundnessViolation {
  int64_t network = 0;
  std::string kind;
  /// "bound" (a point outside a method's bound), "bab-domain" (a point of a ReLU splitting
  /// domain outside its bounds; `message` says which), "bab-input-box" (the same for a box of
  /// input splitting), "unsat" (the cross-check attack found a
  /// point of a property proven unsat), "sat" (a counterexample that is none) or "error"
  /// (verification threw on a valid input; `message` says what).
  std::string check = "bound";
  Method method = Method::Crown;
  int64_t output = 0;
  bool lower_side = true;
  double bound = 0;
  double value = 0;        ///< the point's output that crosses the bound
  std::string reproducer;  ///< path of the JSON file ("" when not written)
  std::string message;     ///< the exception's message, for check "error"
};

struct SoundnessCampaignReport {
  std::vector<SoundnessTally> tallies;  ///< one per method, in options.methods order
  SoundnessBabTally bab;                ///< ReLU splitting's domains
  SoundnessBabTally bab_input;          ///< input splitting's boxes
  std::vector<SoundnessViolation> violations;
  std::map<std::string, int64_t> networks_by_kind;
  int64_t alpha_looser_than_crown = 0;  ///< bounds where alpha-CROWN ended looser than CROWN
  std::map<std::string, int64_t> verdicts;  ///< "sat", "unsat", "timeout", "unknown" counts
  double seconds = 0;
};

/// Runs the campaign; `progress` (when set) is called after each network with its index.
SoundnessCampaignReport run_soundness_campaign(const SoundnessCampaignOptions& options,
                                               const std::function<void(int64_t)>& progress = {});

}  // namespace tessera::lirpa
