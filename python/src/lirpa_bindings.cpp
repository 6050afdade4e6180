/// @file lirpa_bindings.cpp
/// tessera._C.lirpa: networks (ONNX files or bytes, .nnet), bounds over an input box and
/// complete verification of VNN-LIB properties. The Python-facing API is tessera.lirpa.
/// With shard fsdp, fsdp+state or tp under mpirun every call is collective (every rank makes
/// it with the same arguments and gets the same result).

#include "torch_casts.h"  // first: it includes Python.h

#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/graph.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/sharded_param_store.h"
#include "tessera/lirpa/soundness_campaign.h"
#include "tessera/lirpa/verify.h"
#include "tessera/lirpa/verify_options.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::python {
namespace {

using namespace tessera::lirpa;

/// A parameter store for `shard` ("none", "fsdp", "fsdp+state" or "tp"): sharded over the
/// world's ranks for a sharded mode with more than one rank, else the default (local).
std::shared_ptr<ParamStore> store_for(const std::string& shard) {
  ShardMode mode = parse_shard_mode(shard);
  auto comm = dist::world();
  if (mode != ShardMode::None && mode != ShardMode::TpHeads && comm->size() > 1)
    return std::make_shared<ShardedParamStore>(comm, mode);
  return nullptr;
}

/// True when `shard` is "tp-heads" over more than one rank: the model is loaded as this
/// rank's share of its attention and MLP blocks (load_onnx_shares).
bool by_heads(const std::string& shard) {
  return parse_shard_mode(shard) == ShardMode::TpHeads && dist::world()->size() > 1;
}

Graph load_model_file(const std::string& path, const std::string& shard) {
  const bool nnet = path.size() > 5 && path.substr(path.size() - 5) == ".nnet";
  if (nnet) {
    TESSERA_CHECK(parse_shard_mode(shard) == ShardMode::None, Unsupported,
                  "shard '", shard, "' needs an ONNX model, got '", path, "'");
    return load_nnet(path);
  }
  if (by_heads(shard)) return load_onnx_shares(path, dist::world());
  return load_onnx(path, store_for(shard));
}

}  // namespace

void bind_lirpa(py::module_& m) {
  py::class_<Graph>(m, "Graph", "C++ tessera::lirpa::Graph: a network of bound operators.")
      .def_static("load", &load_model_file, py::arg("path"), py::arg("shard") = "none",
                  "Loads an ONNX (or .nnet) file; shard fsdp / fsdp+state / tp: weights split over the ranks; "
                  "tp-heads: this rank's share of the attention heads and MLP columns (bounds: IBP, CROWN).")
      .def_static(
          "load_onnx_bytes",
          [](const py::bytes& bytes, const std::string& source, const std::string& shard) {
            if (by_heads(shard)) return load_onnx_bytes_shares(std::string(bytes), source, dist::world());
            return load_onnx_bytes(std::string(bytes), source, store_for(shard));
          },
          py::arg("data"), py::arg("source") = "<onnx>", py::arg("shard") = "none",
          "Loads an ONNX model from its serialised bytes.")
      .def_property_readonly("input_shape", &Graph::input_shape)
      .def_property_readonly("output_shape", &Graph::output_shape)
      .def_property_readonly("input_size", &Graph::input_size)
      .def_property_readonly("output_size", &Graph::output_size)
      .def_property_readonly("num_nodes", [](const Graph& g) { return g.nodes().size(); })
      .def(
          "forward",
          [](const Graph& g, const at::Tensor& x, const py::object& dtype) {
            return g.forward(x, scalar_type_from(dtype, at::kDouble));
          },
          py::arg("x"), py::arg("dtype") = py::none());

  m.def("supported_onnx_ops", &supported_onnx_ops);

  m.def(
      "compute_bounds",
      [](const Graph& g, const at::Tensor& lower, const at::Tensor& upper, const std::optional<at::Tensor>& c,
         const std::string& method, const py::object& dtype, int alpha_iterations, double alpha_lr,
         const std::string& shard, bool intersect_ibp, bool alpha_final, bool alpha_intermediate) {
        BoundOptions o;
        o.intersect_ibp = intersect_ibp;
        o.alpha.intermediate = alpha_intermediate && !alpha_final;  // either one: the final rows only
        if (parse_shard_mode(shard) == ShardMode::FsdpState) o.shard_rows = dist::world();
        o.method = parse_method(method);
        o.dtype = scalar_type_from(dtype, at::kDouble);
        if (alpha_iterations >= 0) o.alpha.iterations = alpha_iterations;
        if (alpha_lr > 0) o.alpha.lr = alpha_lr;
        py::gil_scoped_release release;
        BoundsResult r = compute_bounds(g, lower, upper, o, c ? *c : at::Tensor());
        return std::make_tuple(r.lower, r.upper, r.iterations);
      },
      py::arg("graph"), py::arg("lower"), py::arg("upper"), py::arg("c") = py::none(), py::arg("method") = "crown",
      py::arg("dtype") = py::none(), py::arg("alpha_iterations") = -1, py::arg("alpha_lr") = -1.0,
      py::arg("shard") = "none", py::arg("intersect_ibp") = false, py::arg("alpha_final") = false,
      py::arg("alpha_intermediate") = true);

  // verify(graph, vnnlib_path, timeout, config_yaml): config_yaml is YAML (or JSON) text.
  m.def(
      "verify",
      [](const Graph& g, const std::string& property_path, double timeout, const std::string& config_yaml,
         const std::string& source, const std::string& shard) {
        VerifyOptions o = config_yaml.empty() ? VerifyOptions{} : parse_verify_config(config_yaml, source);
        const ShardMode mode = parse_shard_mode(shard);
        TESSERA_CHECK(mode != ShardMode::TpHeads, Unsupported,
                      "verify with shard='tp-heads' is not built (alpha-CROWN and branch and bound do not cross its "
                      "zones yet): use bounds, or shard tp / fsdp / fsdp+state");
        auto comm = dist::world();
        const bool sharded = mode != ShardMode::None && comm->size() > 1;
        o.shard_state = mode == ShardMode::FsdpState;
        if (timeout > 0) o.timeout = timeout;
        Property p = load_vnnlib(property_path);
        check_property_sizes(p, g.input_size(), g.output_size(), "'" + property_path + "'");
        VerifyResult r;
        {
          py::gil_scoped_release release;
          r = verify(g, p, o, {}, sharded ? comm : nullptr);
        }
        py::dict out;
        out["verdict"] = verdict_name(r.verdict);
        out["decided_by"] = r.decided_by;
        out["reason"] = r.reason;
        out["domains_visited"] = r.domains_visited;
        out["seconds"] = r.seconds;
        out["results_text"] = results_text(r);
        if (r.counterexample) {
          out["x"] = py::cast(r.counterexample->x);
          out["y"] = py::cast(r.counterexample->y);
        } else {
          out["x"] = py::none();
          out["y"] = py::none();
        }
        return out;
      },
      py::arg("graph"), py::arg("property_path"), py::arg("timeout") = -1.0, py::arg("config_yaml") = "",
      py::arg("source") = "<config>", py::arg("shard") = "none");

  // soundness_campaign(...): `tessera bench soundness`'s report as a dict
  m.def(
      "soundness_campaign",
      [](int64_t networks, int64_t points, uint64_t seed, const std::vector<std::string>& methods,
         double verify_timeout, int64_t bab_domains, const std::string& reproducers) {
        SoundnessCampaignOptions o;
        o.networks = networks;
        o.points = points;
        o.seed = seed;
        o.methods.clear();
        for (const std::string& name : methods) o.methods.push_back(parse_method(name));
        o.verify_timeout = verify_timeout;
        o.bab_domains = bab_domains;
        o.reproducer_dir = reproducers;
        SoundnessCampaignReport r;
        {
          py::gil_scoped_release release;
          r = run_soundness_campaign(o);
        }
        auto totals = [](const auto& t) {  // the fields a method's tally and the domains' share
          py::dict d;
          d["networks"] = t.networks;
          d["points"] = t.points;
          d["violations"] = t.violations;
          d["min_relative_slack"] = t.min_relative_slack;
          return d;
        };
        py::list tallies;
        for (const SoundnessTally& t : r.tallies) {
          py::dict d = totals(t);
          d["method"] = method_name(t.method);
          tallies.append(d);
        }
        auto domains = [&](const SoundnessBabTally& t) {  // branch and bound's domains (or boxes)
          py::dict d = totals(t);
          d["domains"] = t.domains;
          return d;
        };
        py::list violations;
        for (const SoundnessViolation& v : r.violations) {
          py::dict d;
          d["network"] = v.network;
          d["kind"] = v.kind;
          d["check"] = v.check;
          d["method"] = method_name(v.method);
          d["output"] = v.output;
          d["side"] = v.lower_side ? "lower" : "upper";
          d["bound"] = v.bound;
          d["value"] = v.value;
          d["reproducer"] = v.reproducer;
          d["message"] = v.message;
          violations.append(d);
        }
        py::dict out;
        out["methods"] = tallies;
        out["bab_domains"] = domains(r.bab);
        out["bab_input_boxes"] = domains(r.bab_input);
        out["violations"] = violations;
        out["networks_by_kind"] = r.networks_by_kind;
        out["alpha_looser_than_crown"] = r.alpha_looser_than_crown;
        out["verdicts"] = r.verdicts;
        out["seconds"] = r.seconds;
        return out;
      },
      py::arg("networks"), py::arg("points"), py::arg("seed"), py::arg("methods"), py::arg("verify_timeout"),
      py::arg("bab_domains"), py::arg("reproducers"));
}

}  // namespace tessera::python
