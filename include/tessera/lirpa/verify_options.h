#pragma once
/// @file verify_options.h
/// Typed options of complete verification (`tessera verify`), and their YAML form.
///
/// @code
///   VerifyOptions o = tessera::lirpa::load_verify_config("config.yaml");
///   o.timeout = 60;                      // command-line flags override the file
///   o.bab.force_synchronous = true;      // deterministic: fixed batches, no pruning
/// @endcode
///
/// YAML keys mirror the struct fields (every key optional, unknown keys are an error):
/// @code{.yaml}
///   timeout: 300
///   margin: 1.0e-8
///   attack: {enabled: true, restarts: 32, steps: 60, seed: 0}
///   alpha: {enabled: true, iterations: 20, intermediate: true, lr: 0.5, lr_decay: 0.98}
///   beta: {iterations: 10, lr_alpha: 0.1, lr_beta: 0.05, lr_decay: 0.98}
///   bab: {split: auto, branching: babsr, batch_size: 0, force_synchronous: false,
///         attack_every: 20, input_split_max_dims: 16, fsb_topk: 4, input_portfolio_after: 3,
///         input_alpha_band: 0.03, input_alpha_iterations: 20, input_relu_share: 3,
///         input_relu_beta_iterations: 20,
///         input: {candidates: 2, portfolio_candidates: 5, thin_ratio: 0.03125, ...}}
/// @endcode

#include <cstdint>
#include <string>

#include "tessera/lirpa/bounds.h"

namespace tessera::lirpa {

/// PGD attack with random restarts inside the input box.
struct AttackOptions {
  bool enabled = true;
  int restarts = 32;        ///< random starting points (one batch)
  int steps = 60;           ///< projected signed-gradient steps per restart
  double step = 0.25;       ///< first step as a fraction of each input's width (decays to 1/100 of it)
  uint64_t seed = 0;        ///< random seed (runs are reproducible)
};

/// beta-CROWN: optimisable multipliers of the ReLU split constraints, with the alphas.
struct BetaOptions {
  /// Adam steps per batch of domains of ReLU splitting (input splitting's hand-offs:
  /// BabOptions::input_relu_beta_iterations). 10, not 20: the same domains on oval21 and
  /// mnist_fc in half the steps, 1.67x the domains in 120 s on sri_resnet_a 5807
  /// (bench/RESULTS.md, "graph branch and bound", 2026-12-05).
  int iterations = 10;
  double lr_alpha = 0.1;    ///< learning rate of the slopes
  double lr_beta = 0.05;    ///< learning rate of the multipliers
  double lr_decay = 0.98;   ///< both multiplied by this after every step
  /// The steps in float32 (half the memory traffic of each backward pass), then one float64
  /// pass at the slopes and multipliers reached, whose bound is the one kept (any slopes in
  /// [0, 1] and multipliers >= 0 give a sound bound; rounding in float32 would not).
  bool float32_steps = true;
};

/// What branch and bound splits.
enum class SplitKind { Auto, Input, Relu };
/// How a ReLU to split is chosen.
enum class ReluBranching { BaBSR, FSB };

/// Input splitting's tuned constants (bench/RESULTS.md, "input splitting: tuned options",
/// has the measurement behind each value). YAML: `bab: {input: {thin_ratio: 0.03125, ...}}`.
struct InputSplitTuning {
  /// Split candidates (largest smear first) of the first search and of the portfolio's.
  int candidates = 2, portfolio_candidates = 5;
  /// Portfolio search only: dimensions thinner than this times the box's relatively widest
  /// are no candidates.
  double thin_ratio = 1.0 / 32;
  /// Portfolio search only: when no candidate's worse child gains this fraction of the box's
  /// |bound|, the relatively widest dimension is bisected.
  double stall_ratio = 0.01;
  /// A dimension narrower than this fraction of the root box's is a point: no candidate.
  double point_width = 1e-9;
  /// First search only: a dimension whose smear is below this fraction of the box's largest
  /// is no candidate.
  double negligible_smear = 1e-3;
  /// Bytes of open boxes beyond which input splitting gives up (unknown).
  int64_t max_pool_bytes = int64_t{4} << 30;
  /// Work is counted in children bounded, this many making one "second" (the same search at
  /// any load); a batch holds between batch_work_min and batch_work_max "seconds" of work,
  /// and is halved when it takes longer than max_batch_seconds on the clock.
  double children_per_second = 4000;
  double batch_work_min = 0.05, batch_work_max = 0.2, max_batch_seconds = 1.0;
  /// Hand-offs to ReLU splitting: this many lowest-bounded boxes together, with this many
  /// domains a box; a ReLU-splitting domain counts as relu_domain_work children.
  int hand_off_boxes = 32, hand_off_domains = 32;
  double relu_domain_work = 5;
  /// Portfolio phase: every best_first_every-th batch takes the lowest-bounded boxes.
  int best_first_every = 4;
  /// PGD inside the local_attack_boxes worst open children of a batch, local_attack_steps steps.
  int local_attack_boxes = 64, local_attack_steps = 10;
};

struct BabOptions {
  bool enabled = true;
  SplitKind split = SplitKind::Auto;        ///< auto: input splitting up to `input_split_max_dims` inputs
  ReluBranching branching = ReluBranching::BaBSR;
  int input_split_max_dims = 16;
  int fsb_topk = 4;                         ///< FSB: candidates (best BaBSR scores) measured per domain
  int batch_size = 0;                       ///< domains per batch; 0: 1024 (input) or 64 (ReLU)
  int attack_every = 20;                    ///< PGD on the worst sub-domains every this many batches (0: never)
  /// Input splitting: "seconds" of work of the two-candidate search (4,000 children bounded
  /// make one, in every mode: the same search at any load) before a five-candidate search
  /// starts (beside it, or in its place with `input_relu_share` > 0); negative: never. 3, not
  /// 1: with 1, ACAS Xu 5_3 prop_2's counterexample, which the two-candidate search finds
  /// after 3,591 domains (~1.8 "seconds"), was not found in 116 s (bench/RESULTS.md, session 11).
  double input_portfolio_after = 3;
  /// Input splitting: alpha-CROWN (`input_alpha_iterations` Adam steps of the final pass's
  /// slopes, from CROWN's) on the unverified children whose bound lies within this band below
  /// the margin; 0: never. Near verification a box's CROWN bound is off by about its
  /// relaxation's slack, which the slopes recover (ACAS Xu 1_1 prop_5, bench/RESULTS.md).
  double input_alpha_band = 0.03;
  int input_alpha_iterations = 20;
  /// Input splitting: in the portfolio phase the five-candidate search runs alone and hands
  /// its lowest-bounded open boxes over to ReLU splitting, which may cost this many times its
  /// bisection work; 0: never (bisection alone, beside the two-candidate search).
  double input_relu_share = 3;
  /// Input splitting's hand-offs to ReLU splitting: Adam steps per batch (BetaOptions::
  /// iterations elsewhere). 20: with 10, ACAS Xu 1_1 prop_5 took 43,903 input domains instead
  /// of 11,208 (the hand-offs, budgeted in domains, prove fewer boxes).
  int input_relu_beta_iterations = 20;
  InputSplitTuning input;                   ///< input splitting's tuned constants
  /// Deterministic mode: the batch size stays fixed (no automatic resizing) and nothing
  /// is pruned early, so runs in different modes do exactly the same work.
  bool force_synchronous = false;
  int64_t max_domains = 4000000;            ///< stop (unknown) when the pool grows beyond this
  /// ReLU splitting: bytes of the open domains' final-row slopes and split multipliers (K rows
  /// times every ReLU neuron, float32) the pool may keep for their children to start from;
  /// beyond, children start from CROWN's slopes and zero multipliers.
  int64_t inherit_max_bytes = int64_t{1} << 30;
  /// ReLU splitting: a case's open disjuncts in one search (each domain carries every
  /// disjunct's rows and is verified once each has a positive row), not one search after
  /// another; the splits and intermediate bounds are then shared.
  bool disjuncts_together = true;
};

struct VerifyOptions {
  double timeout = 300;       ///< seconds for the whole run (honoured within one second)
  double margin = 1e-8;       ///< a disjunct is proven infeasible when a lower bound exceeds this
  AttackOptions attack;
  AlphaOptions alpha;         ///< alpha-CROWN for incomplete verification
  bool alpha_enabled = true;
  BetaOptions beta;
  BabOptions bab;
  /// Sharded optimisation state (`--shard fsdp+state`; not a YAML key): under a communicator
  /// of several ranks, ReLU-splitting branch and bound splits the children of each batch
  /// across the ranks (each rank bounds and optimises only its block; the per-domain
  /// results are all-gathered in the single-process order). False: every rank bounds all.
  bool shard_state = false;
};

/// Parses the YAML text of a configuration (on top of the defaults); `source` names it
/// in errors. Unknown keys and values of the wrong type throw InvalidInput.
VerifyOptions parse_verify_config(const std::string& yaml, const std::string& source = "<config>");
/// Reads and parses a YAML configuration file.
VerifyOptions load_verify_config(const std::string& path);

std::string split_kind_name(SplitKind k);
std::string relu_branching_name(ReluBranching b);

}  // namespace tessera::lirpa
