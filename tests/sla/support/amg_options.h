#pragma once
// The solve options of the AMG tests: native CG preconditioned by AMG.

#include "tessera/sla/solve_options.h"

namespace tessera::sla::testing {

inline SolveOptions amg_cg(double rtol = 1e-8) {
  SolveOptions o;
  o.backend = Backend::Native;
  o.method = Method::CG;
  o.preconditioner = Preconditioner::AMG;
  o.rtol = rtol;
  return o;
}

}  // namespace tessera::sla::testing
