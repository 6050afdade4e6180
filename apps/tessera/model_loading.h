#pragma once
// Loading the model of `bounds` and `verify`: an ONNX file straight into a sharded
// parameter store when the run is FSDP-sharded (each rank keeps its blocks as the weights
// are read), a `.nnet` file (small ACAS Xu networks) whole and then sharded; and the
// VNN-LIB property, whose warnings go to standard error.

#include <iostream>
#include <memory>
#include <string>

#include "tessera/dist/communicator.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/sharded_param_store.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::app {

/// The network in `path` (`.nnet` or ONNX); with `comm` its parameters are FSDP-sharded.
inline lirpa::Graph load_model(const std::string& path, const std::shared_ptr<dist::Communicator>& comm) {
  const bool nnet = path.size() > 5 && path.substr(path.size() - 5) == ".nnet";
  if (!nnet) return lirpa::load_onnx(path, comm ? std::make_shared<lirpa::ShardedParamStore>(comm) : nullptr);
  lirpa::Graph g = lirpa::load_nnet(path);
  if (comm) lirpa::shard_parameters(g, comm);
  return g;
}

/// The property in `path`; its warnings (an empty input box, say) are printed by rank 0.
inline lirpa::Property load_property(const std::string& path, const dist::Communicator& comm) {
  lirpa::Property p = lirpa::load_vnnlib(path);
  if (comm.rank() == 0) {
    for (const auto& w : p.warnings) std::cerr << "tessera: warning: " << w << std::endl;
  }
  return p;
}

}  // namespace tessera::app
