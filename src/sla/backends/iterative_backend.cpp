// The one-shot solve shared by every iterative backend.
#include "tessera/sla/backends/iterative_backend.h"

namespace tessera::sla {

IterativeResult IterativeBackend::solve(const SparseTensor& a, const at::Tensor& b, const SolveOptions& options,
                                        bool transpose) const {
  return prepare(a, 0, options)->solve(b, transpose, options.method);
}

}  // namespace tessera::sla
