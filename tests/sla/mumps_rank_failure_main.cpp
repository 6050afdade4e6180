// A distributed MUMPS solve that fails, used by expect_job_failure.sh to check that the whole
// job ends quickly with a message instead of hanging:
//  - `nan`: rank 1's rows of A hold a NaN; rank 1 stops before MUMPS's analysis while the
//    other ranks wait inside it;
//  - `singular`: rank 1's rows are all zero (a singular A); MUMPS finds the null pivots in the
//    factorisation and every rank throws alike.

#include <ATen/ATen.h>

#include <limits>
#include <string>

#include "tessera/dist/communicator.h"
#include "tessera/dist/guard.h"
#include "tessera/sla/dist/dsolve.h"
#include "tessera/sla/dist/local_generators.h"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "nan";
  return tessera::dist::run_guarded([&mode]() -> int {
    using namespace tessera::sla;
    auto comm = tessera::dist::world();
    const int64_t n = 32;
    RowPartition part = RowPartition::contiguous(n * n, comm->size());
    DSparseTensor a = DSparseTensor::from_local_rows(comm, part, poisson2d_rows(n, part.rows_of(comm->rank())));
    if (comm->rank() == 1) {
      at::Tensor v = a.values().clone();
      if (mode == "nan") {
        v[0] = std::numeric_limits<double>::quiet_NaN();
      } else {
        v.zero_();
      }
      a = a.with_values(v);
    }
    SolveOptions options;
    options.backend = Backend::Mumps;
    dsolve(a, at::ones({a.owned_rows()}, at::kDouble), options);
    return 0;
  });
}
