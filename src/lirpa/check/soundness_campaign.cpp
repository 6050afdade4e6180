// The soundness campaign: random networks and boxes, every method's bounds against
// sampled points, box vertices and PGD extremes; violations written as reproducers.

#include "tessera/lirpa/soundness_campaign.h"

#include <ATen/ATen.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lirpa/attack/pgd.h"
#include "tessera/core/error.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/random_networks.h"

namespace tessera::lirpa {
namespace {

struct RandomNetwork {
  std::string kind;
  std::string onnx;
};

int64_t draw(int64_t low, int64_t high) { return at::randint(low, high + 1, {1}).item<int64_t>(); }

// Network `index` of the campaign: the kinds in turn, sizes drawn at random.
RandomNetwork draw_network(int64_t index) {
  switch (index % 6) {
    case 0:
    case 1:
    case 2: {
      static const char* acts[] = {"Relu", "Sigmoid", "Tanh"};
      std::vector<int64_t> hidden(draw(1, 4));
      for (auto& h : hidden) h = draw(4, 32);
      const std::string act = acts[index % 6];
      return {"mlp_" + act, random_mlp(draw(2, 8), hidden, draw(1, 5), act)};
    }
    case 3: {
      const std::string pool = draw(0, 1) ? "MaxPool" : "AveragePool";
      return {"cnn_" + pool, random_cnn(pool)};
    }
    case 4: return {"conv_chain", random_conv_chain()};
    default: return {"residual", random_residual(draw(4, 12))};
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

// Writes the model and a JSON file describing the violation; returns the JSON file's path.
std::string write_reproducer(const std::string& dir, const RandomNetwork& net, uint64_t seed,
                             const SoundnessViolation& v, const at::Tensor& lo, const at::Tensor& hi,
                             const at::Tensor& point) {
  std::filesystem::create_directories(dir);
  const std::string stem = dir + "/net" + std::to_string(v.network) + "_" + method_name(v.method) + "_y" +
                           std::to_string(v.output) + (v.lower_side ? "_lower" : "_upper");
  std::ofstream(stem + ".onnx", std::ios::binary) << net.onnx;
  std::ofstream out(stem + ".json");
  out.precision(17);
  out << "{\"network\":" << v.network << ",\"kind\":\"" << v.kind << "\",\"seed\":" << seed
      << ",\"model\":\"" << stem << ".onnx\",\"method\":\"" << method_name(v.method) << "\",\"output\":" << v.output
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
          SoundnessViolation v{i, net.kind, m, j, lower_side, (lower_side ? l : u)[j].item<double>(),
                               (lower_side ? ymin : ymax)[j].item<double>(), ""};
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
    if (progress) progress(i);
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace tessera::lirpa
