#pragma once
/// @file self_check.h
/// A quick run of every collective with known answers, for `tessera info --check-dist`
/// and for smoke-testing an MPI installation.

#include <string>
#include <vector>

namespace tessera::dist {
class Communicator;

struct SelfCheckReport {
  bool passed = true;
  std::vector<std::string> failures;  ///< one line per collective that disagreed
};

/// Runs all_reduce (sum, max, min), all_gather (unequal rows), reduce_scatter, broadcast
/// and a ring neighbour exchange in every supported dtype; each rank checks its result
/// against the closed-form answer. The report is the same on every rank.
SelfCheckReport run_self_check(Communicator& comm);

}  // namespace tessera::dist
