#pragma once
/// @file model_io.h
/// Loading networks: ONNX (the operators of the registry, shape arithmetic folded into
/// constants) and ACAS Xu `.nnet` text files.
///
/// @code
///   tessera::lirpa::Graph g = tessera::lirpa::load_onnx("ACASXU_run2a_1_1_batch_2000.onnx");
///   tessera::lirpa::Graph h = tessera::lirpa::load_nnet("ACASXU_run2a_1_1.nnet");
/// @endcode
/// An operator outside the registry throws `Unsupported` naming the operator, the node and
/// the supported operators; a file that is not a valid model throws `ParseError`.

#include <memory>
#include <string>

#include "tessera/lirpa/graph.h"
#include "tessera/lirpa/param_store.h"

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa {

/// Loads an ONNX model file. The weights go into `store` (default: a LocalParamStore) one
/// at a time as the nodes reading them are built: with a ShardedParamStore every rank keeps
/// its blocks only and no more than one whole weight is held as a tensor while loading
/// (values folded from constants, e.g. a transposed weight, stay whole until the end of
/// loading; the parsed protobuf holds the file's bytes, outside the MemoryLedger).
Graph load_onnx(const std::string& path, std::shared_ptr<ParamStore> store = nullptr);
/// Loads an ONNX model from its serialised bytes; `source` names it in messages.
Graph load_onnx_bytes(const std::string& bytes, const std::string& source = "<onnx>",
                      std::shared_ptr<ParamStore> store = nullptr);
/// ONNX op types this build supports, comma separated.
std::string supported_onnx_ops();

/// Zones of a network split by heads (load_onnx_shares).
struct ZoneSplit {
  int attention = 0;  ///< attention blocks, their heads split over the ranks
  int mlp = 0;        ///< MLP blocks, their hidden columns split
};

/// Tensor parallelism by heads: rank `comm->rank()` loads its share of the network. Each
/// attention block whose heads divide evenly over the ranks becomes a zone: the rank keeps
/// the columns of its heads' Q, K and V projections and the rows of the output projection
/// (column- and row-parallel), bounds its heads only, and the projection's partial results
/// are summed over the ranks (one collective per block); each MLP block likewise by hidden
/// columns. Everything else stays whole on every rank. The zones are found by following the
/// heads' axis through the graph (on the whole network loaded with its weights FSDP-sharded:
/// no rank holds them all); the shares are checked by a forward pass against the whole
/// network (InvalidInput when they differ). Throws Unsupported when no block splits.
Graph load_onnx_shares(const std::string& path, const std::shared_ptr<dist::Communicator>& comm,
                       ZoneSplit* found = nullptr);
/// The same from serialised bytes.
Graph load_onnx_bytes_shares(const std::string& bytes, const std::string& source,
                             const std::shared_ptr<dist::Communicator>& comm, ZoneSplit* found = nullptr);

/// Loads a `.nnet` file (fully connected ReLU network). With `normalize`, the input
/// normalisation (x - mean) / range and output scaling y * range + mean of the file are
/// part of the graph (input clipping to [min, max] is not: give boxes inside it).
Graph load_nnet(const std::string& path, bool normalize = false);

}  // namespace tessera::lirpa
