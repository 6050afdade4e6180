#pragma once
/// @file verify.h
/// Complete verification of a VNN-LIB property: `sat` (with a counterexample the forward
/// pass confirms), `unsat` (proved), `timeout` or `unknown`.
///
/// Pipeline: PGD attack in every input box, then CROWN and alpha-CROWN on the property's
/// rows, then branch and bound on each disjunct not yet proven infeasible (input splitting
/// for low-dimensional inputs, ReLU splitting with beta-CROWN otherwise).
///
/// @code
///   Graph g = load_onnx("net.onnx");
///   Property p = load_vnnlib("prop.vnnlib");
///   VerifyOptions o;  o.timeout = 60;
///   VerifyResult r = verify(g, p, o, [](const Progress& s) { /* print s */ });
///   if (r.verdict == Verdict::Sat) write_results_file("out.txt", r);
/// @endcode

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tessera/lirpa/graph.h"
#include "tessera/lirpa/verify_options.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa {

enum class Verdict { Sat, Unsat, Timeout, Unknown };
/// "sat", "unsat", "timeout", "unknown".
std::string verdict_name(Verdict v);

/// A confirmed counterexample: an input in one of the property's boxes whose outputs
/// satisfy one of the output conjunctions (checked by a plain forward pass in float64).
struct Counterexample {
  at::Tensor x;  ///< [n_inputs] float64
  at::Tensor y;  ///< [n_outputs] float64, the network's outputs at x
  int case_index = 0;
  int disjunct_index = 0;
};

/// Where verification stands (sent to the progress callback about once a second).
struct Progress {
  std::string phase;        ///< "attack", "crown", "alpha-crown", "bab-input", "bab-relu"
  int64_t domains = 0;      ///< sub-domains left
  int64_t visited = 0;      ///< sub-domains bounded so far
  double lower = 0;         ///< global lower bound of the current disjunct (> 0: proven)
  double elapsed = 0;       ///< seconds since the start
  /// At the end of an incomplete stage (phase "crown done", "alpha-crown-final done",
  /// "alpha-crown done"): its alpha-CROWN steps (the most over the input boxes; 0 for CROWN),
  /// with `lower` its bound of the worst disjunct it started open (min over them of the
  /// max over the disjunct's rows of lower(c y) - rhs).
  int iterations = 0;
};

using ProgressFn = std::function<void(const Progress&)>;

struct VerifyResult {
  Verdict verdict = Verdict::Unknown;
  std::optional<Counterexample> counterexample;  ///< set exactly when verdict == Sat
  std::string decided_by;   ///< "attack", "crown", "alpha-crown", "bab-input", "bab-relu", ...
  std::string reason;       ///< why unknown / timeout
  int64_t domains_visited = 0;
  double seconds = 0;
};

/// Decides `property` on `graph`. Under a communicator of several ranks (sharded
/// parameters), every rank calls this with the same arguments and does the same work;
/// the decisions that depend on the clock (the timeout, batch sizes) are rank 0's, so
/// every rank returns the same result.
VerifyResult verify(const Graph& graph, const Property& property, const VerifyOptions& options,
                    const ProgressFn& progress = {}, std::shared_ptr<dist::Communicator> comm = nullptr);

/// Checks a candidate input: the index (case, disjunct) of an output conjunction its
/// forward pass (float64) satisfies while x lies in that case's box, or nothing.
std::optional<Counterexample> check_counterexample(const Graph& graph, const Property& property, const at::Tensor& x);
/// The same check for outputs `y` = f(x) computed elsewhere (a sharded forward pass).
std::optional<Counterexample> check_counterexample_outputs(const Property& property, const at::Tensor& x,
                                                           const at::Tensor& y);

/// The VNN-COMP results text: the verdict line and, for sat, `((X_0 v)\n (X_1 v) ... (Y_0 v) ...)`.
std::string results_text(const VerifyResult& result);
/// Writes `results_text` to `path` (throws InvalidInput when it cannot be written).
void write_results_file(const std::string& path, const VerifyResult& result);

}  // namespace tessera::lirpa
