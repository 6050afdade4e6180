#pragma once
// Loading the model of `bounds` and `verify`: an ONNX file straight into a sharded
// parameter store when the run is sharded (FSDP or TP: each rank keeps its blocks as the
// weights are read), a `.nnet` file (small ACAS Xu networks) whole and then sharded; and the
// VNN-LIB property, whose warnings go to standard error.

#include <iostream>
#include <memory>
#include <string>

#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/sharded_param_store.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::app {

/// True when `mode` on `comm` splits the parameters (a sharded mode on more than one rank).
inline bool splits_parameters(lirpa::ShardMode mode, const dist::Communicator& comm) {
  return mode != lirpa::ShardMode::None && comm.size() > 1;
}

/// The network in `path` (`.nnet` or ONNX); its parameters sharded over `comm` as `mode`
/// says when `splits_parameters(mode, *comm)`, else whole.
inline lirpa::Graph load_model(const std::string& path, const std::shared_ptr<dist::Communicator>& comm,
                               lirpa::ShardMode mode) {
  const bool shard = comm && splits_parameters(mode, *comm);
  const bool nnet = path.size() > 5 && path.substr(path.size() - 5) == ".nnet";
  if (shard && mode == lirpa::ShardMode::TpHeads) {
    TESSERA_CHECK(!nnet, Unsupported, "--shard tp-heads needs an ONNX model with attention or MLP blocks, got '",
                  path, "'");
    return lirpa::load_onnx_shares(path, comm);
  }
  if (!nnet) return lirpa::load_onnx(path, shard ? std::make_shared<lirpa::ShardedParamStore>(comm, mode) : nullptr);
  lirpa::Graph g = lirpa::load_nnet(path);
  if (shard) lirpa::shard_parameters(g, comm, mode);
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
