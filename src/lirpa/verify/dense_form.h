#pragma once
// Whether a network's forward pass is cheap beside its weights: verification runs its
// escalating PGD rounds during ReLU splitting only on such networks.

#include <string>

#include "tessera/lirpa/graph.h"

namespace tessera::lirpa::detail {

/// True when the affine segments between the ReLUs of `graph`, written as dense matrices,
/// hold about as many entries as the network's weights (at most twice, plus 2^20): dense
/// layers, not convolutions, whose matrices repeat every kernel at every position (a CIFAR
/// ResNet: one round of thousands of float64 restarts took minutes). Otherwise `why` says how
/// much larger.
bool dense_form_is_compact(const Graph& graph, std::string* why = nullptr);

}  // namespace tessera::lirpa::detail
