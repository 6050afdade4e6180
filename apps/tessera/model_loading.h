#pragma once
// Loading the model of `bounds` and `verify`: an ONNX file straight into a sharded
// parameter store when the run is FSDP-sharded (each rank keeps its blocks as the weights
// are read), a `.nnet` file (small ACAS Xu networks) whole and then sharded.

#include <memory>
#include <string>

#include "tessera/dist/communicator.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/sharded_param_store.h"

namespace tessera::app {

/// The network in `path` (`.nnet` or ONNX); with `comm` its parameters are FSDP-sharded.
inline lirpa::Graph load_model(const std::string& path, const std::shared_ptr<dist::Communicator>& comm) {
  const bool nnet = path.size() > 5 && path.substr(path.size() - 5) == ".nnet";
  if (!nnet) return lirpa::load_onnx(path, comm ? std::make_shared<lirpa::ShardedParamStore>(comm) : nullptr);
  lirpa::Graph g = lirpa::load_nnet(path);
  if (comm) lirpa::shard_parameters(g, comm);
  return g;
}

}  // namespace tessera::app
