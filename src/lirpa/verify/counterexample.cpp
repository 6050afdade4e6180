// Counterexample checking by a plain forward pass, and the VNN-COMP results file.

#include <ATen/ATen.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tessera/core/error.h"
#include "tessera/lirpa/verify.h"

namespace tessera::lirpa {

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Sat: return "sat";
    case Verdict::Unsat: return "unsat";
    case Verdict::Timeout: return "timeout";
    case Verdict::Unknown: return "unknown";
  }
  return "unknown";
}

std::optional<Counterexample> check_counterexample(const Graph& graph, const Property& property,
                                                   const at::Tensor& x) {
  at::NoGradGuard no_grad;
  at::Tensor xd = x.detach().to(at::kDouble).reshape({-1}).contiguous();
  TESSERA_CHECK(xd.numel() == graph.input_size(), DimensionMismatch, "counterexample has ", xd.numel(),
                " values, the network takes ", graph.input_size());
  if (!at::isfinite(xd).all().item<bool>()) return std::nullopt;
  return check_counterexample_outputs(property, xd, graph.forward(xd.unsqueeze(0), at::kDouble));  // y = f(x)
}

std::optional<Counterexample> check_counterexample_outputs(const Property& property, const at::Tensor& x,
                                                           const at::Tensor& y_of_x) {
  at::NoGradGuard no_grad;
  at::Tensor xd = x.detach().to(at::kDouble).reshape({-1}).contiguous();
  at::Tensor y = y_of_x.detach().to(at::kDouble).reshape({-1}).contiguous();
  if (!at::isfinite(xd).all().item<bool>() || !at::isfinite(y).all().item<bool>()) return std::nullopt;
  for (size_t c = 0; c < property.cases.size(); ++c) {
    const PropertyCase& pc = property.cases[c];
    // x in the box: lower <= x <= upper, exactly
    if (!(xd >= pc.lower).all().item<bool>() || !(xd <= pc.upper).all().item<bool>()) continue;
    for (size_t d = 0; d < pc.disjuncts.size(); ++d) {
      const OutputConjunction& oc = pc.disjuncts[d];
      // every row of the conjunction holds: c y <= rhs
      bool holds = oc.c.size(0) == 0 || (at::matmul(oc.c, y) <= oc.rhs).all().item<bool>();
      if (holds) return Counterexample{xd, y, static_cast<int>(c), static_cast<int>(d)};
    }
  }
  return std::nullopt;
}

std::string results_text(const VerifyResult& result) {
  std::ostringstream out;
  out << verdict_name(result.verdict) << "\n";
  if (result.verdict != Verdict::Sat) return out.str();
  TESSERA_CHECK(result.counterexample.has_value(), InvalidInput, "a sat result needs its counterexample");
  const Counterexample& ce = *result.counterexample;
  char buf[64];
  auto put = [&](const char* name, const at::Tensor& v, bool first, bool last_block) {
    const double* p = v.data_ptr<double>();
    for (int64_t i = 0; i < v.numel(); ++i) {
      std::snprintf(buf, sizeof buf, "%.17g", p[i]);
      out << (first && i == 0 ? "((" : " (") << name << "_" << i << " " << buf << ")";
      out << (last_block && i + 1 == v.numel() ? ")\n" : "\n");
    }
  };
  at::Tensor x = ce.x.to(at::kDouble).contiguous(), y = ce.y.to(at::kDouble).contiguous();
  put("X", x, true, y.numel() == 0);
  put("Y", y, x.numel() == 0, true);
  return out.str();
}

void write_results_file(const std::string& path, const VerifyResult& result) {
  std::ofstream out(path);
  TESSERA_CHECK(out.good(), InvalidInput, "cannot write the results file '", path, "'");
  out << results_text(result);
  out.flush();
  TESSERA_CHECK(out.good(), InvalidInput, "writing the results file '", path, "' failed");
}

}  // namespace tessera::lirpa
