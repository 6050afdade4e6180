// A distributed BoomerAMG solve in which rank 1 fails inside the hypre set-up (its rows of A
// hold a NaN) while the other ranks wait in hypre's collective assembly. Used by
// expect_job_failure.sh to check that the whole job ends quickly with the failing rank's
// message instead of hanging.

#include <ATen/ATen.h>

#include <limits>

#include "tessera/dist/communicator.h"
#include "tessera/dist/guard.h"
#include "tessera/sla/dist/dsolve.h"
#include "tessera/sla/dist/local_generators.h"

int main() {
  return tessera::dist::run_guarded([]() -> int {
    using namespace tessera::sla;
    auto comm = tessera::dist::world();
    const int64_t n = 64;
    RowPartition part = RowPartition::contiguous(n * n, comm->size());
    DSparseTensor a = DSparseTensor::from_local_rows(comm, part, poisson2d_rows(n, part.rows_of(comm->rank())));
    if (comm->rank() == 1) {
      at::Tensor v = a.values().clone();
      v[0] = std::numeric_limits<double>::quiet_NaN();
      a = a.with_values(v);
    }
    SolveOptions options;
    options.method = Method::CG;
    options.preconditioner = Preconditioner::BoomerAMG;
    dsolve(a, at::ones({a.owned_rows()}, at::kDouble), options);
    return 0;
  });
}
