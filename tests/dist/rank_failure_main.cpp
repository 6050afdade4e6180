// A program in which rank 1 fails while rank 0 waits in a collective. Used by
// expect_job_failure.sh to check that the whole job ends quickly with a message.
//   throw:  rank 1 throws a tessera error inside run_guarded
//   exit:   rank 1 calls exit(5) without finalising MPI
//   signal: rank 1 is killed by SIGKILL

#include <csignal>
#include <cstdlib>
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/guard.h"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "throw";
  return tessera::dist::run_guarded([&]() -> int {
    auto comm = tessera::dist::world();
    if (comm->rank() == 1) {
      if (std::strcmp(mode, "throw") == 0) {
        TESSERA_THROW(InvalidInput, "deliberate failure on rank 1");
      } else if (std::strcmp(mode, "exit") == 0) {
        std::exit(5);
      } else {
        std::raise(SIGKILL);
      }
    }
    comm->barrier();  // rank 0 would wait here forever if nothing ended the job
    return 0;
  });
}
