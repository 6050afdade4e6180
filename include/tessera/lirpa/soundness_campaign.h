#pragma once
/// @file soundness_campaign.h
/// A search for unsound bounds: many random networks (ReLU, sigmoid and tanh MLPs, CNNs
/// with pooling and BatchNorm, convolution chains, residual nets) on random input boxes of
/// widths from 1e-3 to 1; every method's bounds are checked against uniformly sampled
/// points, the box's vertices and PGD runs towards each output's minimum and maximum. A
/// violation is written out as a reproducer (the ONNX model and a JSON file with the box,
/// the method, the bound and the point). `tessera bench soundness` runs it.
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

struct SoundnessViolation {
  int64_t network = 0;
  std::string kind;
  Method method = Method::Crown;
  int64_t output = 0;
  bool lower_side = true;
  double bound = 0;
  double value = 0;        ///< the point's output that crosses the bound
  std::string reproducer;  ///< path of the JSON file ("" when not written)
};

struct SoundnessCampaignReport {
  std::vector<SoundnessTally> tallies;  ///< one per method, in options.methods order
  std::vector<SoundnessViolation> violations;
  std::map<std::string, int64_t> networks_by_kind;
  int64_t alpha_looser_than_crown = 0;  ///< bounds where alpha-CROWN ended looser than CROWN
  double seconds = 0;
};

/// Runs the campaign; `progress` (when set) is called after each network with its index.
SoundnessCampaignReport run_soundness_campaign(const SoundnessCampaignOptions& options,
                                               const std::function<void(int64_t)>& progress = {});

}  // namespace tessera::lirpa
