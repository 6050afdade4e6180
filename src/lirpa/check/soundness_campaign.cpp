// The soundness campaign: random networks and boxes, every method's bounds against
// sampled points, box vertices and PGD extremes; violations written as reproducers.

#include "tessera/lirpa/soundness_campaign.h"

#include <ATen/ATen.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/graph_bab.h"
#include "lirpa/bab/input_split_steps.h"
#include "lirpa/node_values.h"
#include "lirpa/verify/run_clock.h"
#include "tessera/core/error.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/random_networks.h"
#include "tessera/lirpa/verify.h"

namespace tessera::lirpa {
namespace {

struct RandomNetwork {
  std::string kind;
  std::string onnx;
};

/// A branch and bound check's time limit (its domain budget ends it first on these networks).
constexpr double kBabCheckSeconds = 30;
/// Uniform samples drawn inside each box of input splitting (besides its minimising vertex
/// and a PGD end).
constexpr int64_t kBoxSamples = 8;
constexpr int kBoxPgdSteps = 10;

int64_t draw(int64_t low, int64_t high) { return at::randint(low, high + 1, {1}).item<int64_t>(); }

// Network `index` of the campaign: the kinds in turn, sizes drawn at random.
RandomNetwork draw_network(int64_t index) {
  switch (index % 7) {
    case 0:
    case 1:
    case 2: {
      static const char* acts[] = {"Relu", "Sigmoid", "Tanh"};
      std::vector<int64_t> hidden(draw(1, 4));
      for (auto& h : hidden) h = draw(4, 32);
      const std::string act = acts[index % 7];
      return {"mlp_" + act, random_mlp(draw(2, 8), hidden, draw(1, 5), act)};
    }
    case 3: {
      const std::string pool = draw(0, 1) ? "MaxPool" : "AveragePool";
      return {"cnn_" + pool, random_cnn(pool)};
    }
    case 4: return {"conv_chain", random_conv_chain()};
    case 5: return {"residual", random_residual(draw(4, 12))};
    default: return {"attention", random_attention(draw(2, 4), draw(2, 6))};
  }
}

std::string json_vector(const at::Tensor& t) {
  std::ostringstream out;
  out.precision(17);
  at::Tensor c = t.to(at::kDouble).contiguous().flatten();
  out << "[";
  for (int64_t i = 0; i < c.numel(); ++i) out << (i ? "," : "") << c.data_ptr<double>()[i];
  out << "]";
  return out.str();
}

// Writes the model (and the property, for a verdict) and a JSON file describing the
// violation; returns the JSON file's path.
std::string write_reproducer(const std::string& dir, const RandomNetwork& net, uint64_t seed,
                             const SoundnessViolation& v, const at::Tensor& lo, const at::Tensor& hi,
                             const at::Tensor& point, const std::string& vnnlib = "") {
  std::filesystem::create_directories(dir);
  const std::string what = v.check == "bound"        ? method_name(v.method)
                           : v.check == "bab-domain" ? std::string("bab_domain")
                           : v.check == "bab-input-box" ? std::string("bab_input_box")
                                                     : "verdict_" + v.check;
  const std::string stem = dir + "/net" + std::to_string(v.network) + "_" + what + "_y" + std::to_string(v.output) +
                           (v.lower_side ? "_lower" : "_upper");
  std::ofstream(stem + ".onnx", std::ios::binary) << net.onnx;
  if (!vnnlib.empty()) std::ofstream(stem + ".vnnlib") << vnnlib;
  std::ofstream out(stem + ".json");
  out.precision(17);
  out << "{\"network\":" << v.network << ",\"kind\":\"" << v.kind << "\",\"seed\":" << seed
      << ",\"check\":\"" << v.check << "\",\"model\":\"" << stem << ".onnx\""
      << (vnnlib.empty() ? "" : ",\"property\":\"" + stem + ".vnnlib\"")
      << ",\"method\":\"" << method_name(v.method) << "\",\"output\":" << v.output
      << ",\"side\":\"" << (v.lower_side ? "lower" : "upper") << "\",\"bound\":" << v.bound
      << ",\"value\":" << v.value << ",\"box_lower\":" << json_vector(lo) << ",\"box_upper\":" << json_vector(hi)
      << ",\"point\":" << json_vector(point) << "}\n";
  return stem + ".json";
}

// Uniform samples, the box's vertices along random sign patterns, and the ends of PGD runs
// towards each output's minimum and maximum: [N, n_in].
at::Tensor sample_points(const Graph& g, const at::Tensor& lo, const at::Tensor& hi,
                         const SoundnessCampaignOptions& o) {
  const int64_t n = lo.numel();
  std::vector<at::Tensor> parts;
  parts.push_back(lo + (hi - lo) * at::rand({o.points, n}, at::kDouble));
  parts.push_back(at::where(at::rand({64, n}, at::kDouble) > 0.5, hi, lo));
  if (o.pgd_starts > 0 && o.pgd_steps > 0) {
    detail::BatchFn f = [&g](const at::Tensor& x) { return g.forward(x, at::kDouble); };
    const int64_t m = g.output_size();
    for (int64_t j = 0; j < m; ++j) {
      for (double sign : {1.0, -1.0}) {  // minimise y_j, then -y_j
        at::Tensor c = at::zeros({1, m}, at::kDouble);
        c[0][j] = sign;
        at::Tensor start = lo + (hi - lo) * at::rand({o.pgd_starts, n}, at::kDouble);
        detail::PgdRows r = detail::pgd_rows(f, lo, hi, start, c, at::zeros({1}, at::kDouble), o.pgd_steps,
                                             0.25, 0.01);
        parts.push_back(r.x.detach());
      }
    }
  }
  return at::cat(parts);
}


std::string vnnlib_text(const at::Tensor& lo, const at::Tensor& hi, int64_t outputs, int64_t j, double t) {
  std::ostringstream out;
  out.precision(17);
  for (int64_t i = 0; i < lo.numel(); ++i) out << "(declare-const X_" << i << " Real)\n";
  for (int64_t k = 0; k < outputs; ++k) out << "(declare-const Y_" << k << " Real)\n";
  for (int64_t i = 0; i < lo.numel(); ++i) {
    out << "(assert (>= X_" << i << " " << lo[i].item<double>() << "))\n";
    out << "(assert (<= X_" << i << " " << hi[i].item<double>() << "))\n";
  }
  out << "(assert (<= Y_" << j << " " << t << "))\n";
  return out.str();
}

// Verifies the property "y_j <= t" (t near the sampled minimum of a random output j) and
// cross-checks the verdict: an `unsat` against a stronger PGD attack and the sampled points
// (x, y), a `sat` by evaluating its counterexample again.
void check_verdict(const Graph& g, const RandomNetwork& net, uint64_t seed, int64_t index, const at::Tensor& lo,
                   const at::Tensor& hi, const at::Tensor& x, const at::Tensor& y,
                   const SoundnessCampaignOptions& o, SoundnessCampaignReport& report) {
  const int64_t n = lo.numel(), m = g.output_size();
  const int64_t j = draw(0, m - 1);
  at::Tensor yj = y.select(1, j);
  const double ymin = yj.min().item<double>(), range = yj.max().item<double>() - ymin;
  static const double gaps[] = {-0.02, 0.0, 0.002, 0.01, 0.05};  // of the sampled range
  const double t = ymin - gaps[draw(0, 4)] * std::max(range, 1e-12);
  OutputConjunction oc;
  oc.c = at::zeros({1, m}, at::kDouble);
  oc.c[0][j] = 1.0;
  oc.rhs = at::full({1}, t, at::kDouble);
  Property p;
  p.n_inputs = n;
  p.n_outputs = m;
  p.cases.push_back(PropertyCase{lo.clone(), hi.clone(), {oc}});
  VerifyOptions vo;
  vo.timeout = o.verify_timeout;
  auto record = [&](const std::string& check, double value, const at::Tensor& point) {
    SoundnessViolation v{index, net.kind, check, Method::Crown, j, true, t, value, "", ""};
    if (!o.reproducer_dir.empty())
      v.reproducer = write_reproducer(o.reproducer_dir, net, seed, v, lo, hi, point, vnnlib_text(lo, hi, m, j, t));
    report.violations.push_back(v);
  };
  VerifyResult r;
  try {
    r = verify(g, p, vo);
  } catch (const std::exception& e) {  // verification must answer, never throw, on a valid input
    ++report.verdicts["error"];
    record("error", 0.0, (lo + hi) / 2);
    report.violations.back().message = e.what();
    return;
  }
  ++report.verdicts[verdict_name(r.verdict)];
  if (r.verdict == Verdict::Unsat) {
    detail::BatchFn f = [&g](const at::Tensor& in) { return g.forward(in, at::kDouble); };
    at::Tensor start = at::cat({lo + (hi - lo) * at::rand({o.cross_check_restarts, n}, at::kDouble),
                                x[yj.argmin().item<int64_t>()].unsqueeze(0)});
    detail::PgdRows attack = detail::pgd_rows(f, lo, hi, start, oc.c, oc.rhs, o.cross_check_steps, 0.25, 0.01);
    const int64_t best = attack.value.argmin().item<int64_t>();
    if (attack.value[best].item<double>() <= 0.0) {
      record("unsat", attack.value[best].item<double>() + t, attack.x[best].detach());
    } else if (ymin <= t) {
      record("unsat", ymin, x[yj.argmin().item<int64_t>()]);
    }
  } else if (r.verdict == Verdict::Sat) {
    const at::Tensor cex = r.counterexample->x.to(at::kDouble).flatten();
    at::Tensor value;
    {
      at::NoGradGuard no_grad;
      value = g.forward(cex.unsqueeze(0), at::kDouble)[0][j];
    }
    const bool inside = (cex >= lo).all().item<bool>() && (cex <= hi).all().item<bool>();
    if (!inside || value.item<double>() > t) record("sat", value.item<double>(), cex);
  }
}

// ReLU splitting as `verify` runs it (graph_relu_split_bab, default options) on "y_j > t" for a
// random output j, t 1% of the sampled range below the sampled minimum (mostly unsat, so the
// search splits), for `bab_domains` domains; no counterexample ends it. Each domain is checked
// as it is bounded: the sampled points whose ReLU inputs take the signs of its splits must lie
// inside its bounds of every ReLU input and above its bound of y_j - t, and a domain called
// infeasible must hold none.
void check_bab_domains(const Graph& g, const RandomNetwork& net, uint64_t seed, int64_t index, const at::Tensor& lo,
                       const at::Tensor& hi, const at::Tensor& x, const SoundnessCampaignOptions& o,
                       SoundnessCampaignReport& report) {
  const std::vector<detail::GraphRelu> relus = detail::graph_relus(g);
  if (relus.empty() || o.bab_domains <= 0) return;
  const int64_t points = x.size(0), m = g.output_size();
  std::vector<at::Tensor> values;
  {
    at::NoGradGuard no_grad;
    values = detail::node_values(g, x);
  }
  std::vector<at::Tensor> z;  // each ReLU node's input at the points [N, n_r]
  for (const detail::GraphRelu& r : relus) z.push_back(values[r.input].reshape({points, -1}));
  const int64_t j = draw(0, m - 1);
  const at::Tensor yj = values[g.output_id()].reshape({points, -1}).select(1, j);
  const double ymin = yj.min().item<double>(), range = yj.max().item<double>() - ymin;
  const double t = ymin - 0.01 * std::max(range, 1e-12);
  at::Tensor c = at::zeros({1, m}, at::kDouble);
  c[0][j] = 1.0;
  const detail::BabProblem problem{lo, hi, c, at::full({1}, t, at::kDouble), {}};
  const at::Tensor row = yj - t;  // >= the row's bound in every domain that holds the point
  SoundnessBabTally& tally = report.bab;
  ++tally.networks;
  auto record = [&](double bound, double value, bool lower_side, const at::Tensor& point, const std::string& what) {
    ++tally.violations;
    SoundnessViolation v{index, net.kind, "bab-domain", Method::Crown, j, lower_side, bound, value, "", what};
    if (!o.reproducer_dir.empty()) v.reproducer = write_reproducer(o.reproducer_dir, net, seed, v, lo, hi, point);
    report.violations.push_back(v);
  };
  int64_t bounded = 0;  // this search's domains so far
  auto observe = [&](const detail::GraphDomains& d, const detail::GraphBounded& b) {
    at::NoGradGuard no_grad;
    for (int64_t k = 0; k < d.size(); ++k, ++bounded) {
      ++tally.domains;
      at::Tensor in = at::ones({points}, at::kBool);  // the points that take the domain's split signs
      for (size_t h = 0; h < relus.size(); ++h) {
        const at::Tensor s = d.split[h][k].unsqueeze(0);
        in = in.logical_and(((z[h] >= 0).logical_or(s != 1)).all(1)).logical_and(((z[h] <= 0).logical_or(s != -1)).all(1));
      }
      const at::Tensor idx = at::nonzero(in).reshape({-1});
      if (idx.numel() == 0) continue;
      const std::string where = "domain " + std::to_string(bounded) + " of ReLU splitting";
      if (b.bounds.infeasible[k].item<bool>()) {
        record(0.0, 0.0, true, x[idx[0].item<int64_t>()], where + " called infeasible holds sampled points");
        continue;
      }
      tally.points += idx.numel();
      // the row: min over the domain's points of y_j - t against its lower bound
      const at::Tensor r = row.index_select(0, idx);
      const double lb = b.lb[k][0].item<double>(), scale = 1.0 + r.abs().max().item<double>();
      const double slack = (r.min().item<double>() - lb) / scale;
      tally.min_relative_slack = std::min(tally.min_relative_slack, slack);
      if (slack < -o.tolerance)
        record(lb + t, r.min().item<double>() + t, true, x[idx[r.argmin().item<int64_t>()].item<int64_t>()],
               where + ": a point below the bound of y_j");
      for (size_t h = 0; h < relus.size(); ++h) {  // each ReLU input inside the domain's bounds
        const at::Tensor zh = z[h].index_select(0, idx);
        const double zscale = 1.0 + zh.abs().max().item<double>();
        const at::Tensor below = (zh - b.bounds.lower[h][k].unsqueeze(0)) / zscale;
        const at::Tensor above = (b.bounds.upper[h][k].unsqueeze(0) - zh) / zscale;
        const double worst = std::min(below.min().item<double>(), above.min().item<double>());
        tally.min_relative_slack = std::min(tally.min_relative_slack, worst);
        if (worst < -o.tolerance) {
          const bool low = below.min().item<double>() <= above.min().item<double>();
          const at::Tensor flat = (low ? below : above).flatten();
          const int64_t at_flat = flat.argmin().item<int64_t>(), n = zh.size(1);
          const double bound = (low ? b.bounds.lower[h] : b.bounds.upper[h])[k][at_flat % n].item<double>();
          record(bound, zh.flatten()[at_flat].item<double>(), low, x[idx[at_flat / n].item<int64_t>()],
                 where + ": ReLU node " + std::to_string(h) + " input " + std::to_string(at_flat % n) +
                     " outside its bounds");
        }
      }
    }
  };
  VerifyOptions vo;
  const detail::RunClock clock(kBabCheckSeconds);
  detail::GraphBabContext ctx{g, vo, clock, [](const at::Tensor&) { return false; }, nullptr, "bab-relu", {}};
  ctx.observe = observe;
  detail::ReluSplitStart start;
  start.max_visited = o.bab_domains;
  detail::graph_relu_split_bab(ctx, problem, start);
}

// Input splitting as `verify` runs it (input_split_bab, default options) on networks with
// ReLUs and at most `input_split_max_dims` inputs, on "max_k (y_k - t_k) > 0" for two random
// outputs (one when there is one), each t_k 1% of the sampled range below the sampled
// minimum, for `bab_domains` boxes; no counterexample ends it. Each box is checked as it is
// bounded, at points drawn inside it (uniform samples, the vertex minimising its best row's
// linear bound, and a PGD end from there): max_k (y_k - t_k) must lie above the box's bound,
// and every ReLU input inside the box's bounds of it.
void check_input_boxes(const Graph& g, const RandomNetwork& net, uint64_t seed, int64_t index, const at::Tensor& lo,
                       const at::Tensor& hi, const at::Tensor& y, const SoundnessCampaignOptions& o,
                       SoundnessCampaignReport& report) {
  const VerifyOptions vo;
  const std::vector<detail::GraphRelu> relus = detail::graph_relus(g);
  if (relus.empty() || lo.numel() > vo.bab.input_split_max_dims || o.bab_domains <= 0) return;
  const int64_t m = g.output_size(), n = lo.numel();
  std::vector<int64_t> outputs{draw(0, m - 1)};
  if (m > 1) outputs.push_back((outputs[0] + draw(1, m - 1)) % m);
  const int64_t k = static_cast<int64_t>(outputs.size());
  at::Tensor c = at::zeros({k, m}, at::kDouble), rhs = at::zeros({k}, at::kDouble);
  for (int64_t r = 0; r < k; ++r) {
    const at::Tensor yr = y.select(1, outputs[r]);
    const double ymin = yr.min().item<double>(), range = yr.max().item<double>() - ymin;
    c[r][outputs[r]] = 1.0;
    rhs[r] = ymin - 0.01 * std::max(range, 1e-12);
  }
  const detail::BabProblem problem{lo, hi, c, rhs, {}};
  const detail::BatchFn f = [&g](const at::Tensor& x) { return g.forward(x, at::kDouble); };
  SoundnessBabTally& tally = report.bab_input;
  ++tally.networks;
  int64_t bounded = 0;  // this search's boxes so far
  auto record = [&](double bound, double value, bool lower_side, const at::Tensor& point, const std::string& what) {
    ++tally.violations;
    SoundnessViolation v{index, net.kind, "bab-input-box", Method::Crown, outputs[0], lower_side, bound, value, "",
                         what};
    if (!o.reproducer_dir.empty()) v.reproducer = write_reproducer(o.reproducer_dir, net, seed, v, lo, hi, point);
    report.violations.push_back(v);
  };
  auto observe = [&](const at::Tensor& xl, const at::Tensor& xu, const detail::Bounded& b) {
    at::NoGradGuard no_grad;
    const int64_t boxes = xl.size(0), per_box = kBoxSamples + 2;
    const at::Tensor vertex = detail::minimising_vertex(b.a.to(at::kDouble), b.rows, xl, xu);
    at::Tensor pgd_end;
    {
      at::AutoGradMode grad(true);
      pgd_end = detail::pgd_rows(f, xl, xu, vertex, c, rhs, kBoxPgdSteps, 0.25, 0.01).x.detach();
    }
    const at::Tensor uniform =
        xl.unsqueeze(1) + (xu - xl).unsqueeze(1) * at::rand({boxes, kBoxSamples, n}, at::kDouble);
    // [boxes * per_box, n], box-major
    const at::Tensor x = at::cat({uniform, vertex.unsqueeze(1), pgd_end.unsqueeze(1)}, 1).reshape({-1, n});
    const std::vector<at::Tensor> values = detail::node_values(g, x);
    // the property's value max_k (y_k - t_k) at each point, against its box's bound
    const at::Tensor rows = at::matmul(values[g.output_id()].reshape({x.size(0), m}), c.t()) - rhs;  // y_k - t_k
    const at::Tensor value = std::get<0>(rows.max(1)).reshape({boxes, per_box});
    const at::Tensor score = b.score.to(at::kDouble);
    const at::Tensor scale = 1.0 + value.abs().amax(1);
    const at::Tensor slack = (value.amin(1) - score) / scale;  // >= 0 when sound
    tally.domains += boxes;
    tally.points += boxes * per_box;
    tally.min_relative_slack = std::min(tally.min_relative_slack, slack.min().item<double>());
    const at::Tensor below_bound = at::nonzero(slack < -o.tolerance).reshape({-1});
    for (int64_t e = 0; e < below_bound.numel(); ++e) {
      const int64_t i = below_bound[e].item<int64_t>(), at_point = value[i].argmin().item<int64_t>();
      record(score[i].item<double>(), value[i][at_point].item<double>(), true, x[i * per_box + at_point],
             "box " + std::to_string(bounded + i) + " of input splitting: a point below the bound of the property");
    }
    for (size_t h = 0; h < relus.size(); ++h) {  // each ReLU input inside the box's bounds
      const at::Tensor z = values[relus[h].input].reshape({boxes, per_box, -1});
      const at::Tensor zscale = 1.0 + z.abs().amax({1, 2}, true);
      const at::Tensor below = (z - b.layers.lower[h].to(at::kDouble).unsqueeze(1)) / zscale;
      const at::Tensor above = (b.layers.upper[h].to(at::kDouble).unsqueeze(1) - z) / zscale;
      const at::Tensor worst = at::minimum(below, above).reshape({boxes, -1}).amin(1);
      tally.min_relative_slack = std::min(tally.min_relative_slack, worst.min().item<double>());
      const at::Tensor bad = at::nonzero(worst < -o.tolerance).reshape({-1});
      for (int64_t e = 0; e < bad.numel(); ++e) {
        const int64_t i = bad[e].item<int64_t>(), width = z.size(2);
        const bool low = below[i].min().item<double>() <= above[i].min().item<double>();
        const int64_t flat = (low ? below[i] : above[i]).flatten().argmin().item<int64_t>();
        const double bound = (low ? b.layers.lower[h] : b.layers.upper[h])[i][flat % width].item<double>();
        record(bound, z[i].flatten()[flat].item<double>(), low, x[i * per_box + flat / width],
               "box " + std::to_string(bounded + i) + " of input splitting: ReLU node " + std::to_string(h) +
                   " input " + std::to_string(flat % width) + " outside its bounds");
      }
    }
    bounded += boxes;
  };
  const detail::RunClock clock(kBabCheckSeconds);
  detail::BabContext ctx{f, vo, clock, [](const at::Tensor&) { return false; }, {}, "bab-input", nullptr, {}, g};
  ctx.observe = observe;
  ctx.max_visited = o.bab_domains;
  detail::input_split_bab(ctx, problem);
}

}  // namespace

SoundnessCampaignReport run_soundness_campaign(const SoundnessCampaignOptions& o,
                                               const std::function<void(int64_t)>& progress) {
  TESSERA_CHECK(o.networks >= 0 && o.points >= 0, InvalidInput, "soundness campaign: networks and points must be >= 0");
  TESSERA_CHECK(!o.methods.empty(), InvalidInput, "soundness campaign: no method to check");
  const auto t0 = std::chrono::steady_clock::now();
  SoundnessCampaignReport report;
  for (Method m : o.methods) report.tallies.push_back(SoundnessTally{m});
  for (int64_t i = 0; i < o.networks; ++i) {
    const uint64_t seed = o.seed * 1000003ull + static_cast<uint64_t>(i);
    at::manual_seed(seed);
    RandomNetwork net = draw_network(i);
    Graph g = load_onnx_bytes(net.onnx);
    ++report.networks_by_kind[net.kind];
    const int64_t n = g.input_size();
    static const double widths[] = {1e-3, 1e-2, 0.1, 0.5, 1.0};
    at::Tensor centre = at::randn({n}, at::kDouble) * 0.5;
    at::Tensor radius = at::rand({n}, at::kDouble) * widths[draw(0, 4)];
    at::Tensor lo = centre - radius, hi = centre + radius;
    at::Tensor x = sample_points(g, lo, hi, o);
    at::Tensor y;
    {
      at::NoGradGuard no_grad;
      y = g.forward(x, at::kDouble);
    }
    auto [ymin, imin] = y.min(0);
    auto [ymax, imax] = y.max(0);
    const double scale = 1.0 + y.abs().max().item<double>();
    BoundsResult crown;
    for (size_t k = 0; k < o.methods.size(); ++k) {
      const Method m = o.methods[k];
      BoundOptions bo;
      bo.method = m;
      BoundsResult r = compute_bounds(g, lo, hi, bo);
      at::Tensor l = r.lower.to(at::kDouble), u = r.upper.to(at::kDouble);
      SoundnessTally& tally = report.tallies[k];
      ++tally.networks;
      tally.points += x.size(0);
      at::Tensor slack_lower = (ymin - l) / scale, slack_upper = (u - ymax) / scale;  // >= 0 when sound
      tally.min_relative_slack = std::min(
          {tally.min_relative_slack, slack_lower.min().item<double>(), slack_upper.min().item<double>()});
      for (int64_t j = 0; j < l.numel(); ++j) {
        for (bool lower_side : {true, false}) {
          const double slack = (lower_side ? slack_lower : slack_upper)[j].item<double>();
          if (slack >= -o.tolerance) continue;
          ++tally.violations;
          SoundnessViolation v{i, net.kind, "bound", m, j, lower_side, (lower_side ? l : u)[j].item<double>(),
                               (lower_side ? ymin : ymax)[j].item<double>(), "", ""};
          if (!o.reproducer_dir.empty()) {
            const int64_t at_point = (lower_side ? imin : imax)[j].item<int64_t>();
            v.reproducer = write_reproducer(o.reproducer_dir, net, seed, v, lo, hi, x[at_point]);
          }
          report.violations.push_back(v);
        }
      }
      if (m == Method::Crown) crown = r;
      if (m == Method::AlphaCrown && crown.lower.defined()) {
        const double tol = o.tolerance * scale;
        report.alpha_looser_than_crown += (l < crown.lower.to(at::kDouble) - tol).sum().item<int64_t>() +
                                          (u > crown.upper.to(at::kDouble) + tol).sum().item<int64_t>();
      }
    }
    if (o.verify_timeout > 0) check_verdict(g, net, seed, i, lo, hi, x, y, o, report);
    check_bab_domains(g, net, seed, i, lo, hi, x, o, report);
    check_input_boxes(g, net, seed, i, lo, hi, y, o, report);
    if (progress) progress(i);
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace tessera::lirpa
