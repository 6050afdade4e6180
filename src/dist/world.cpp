// Chooses the process's communicator: MPI under an MPI launcher, else single-process.

#include <mutex>

#include "dist/mpi_communicator.h"
#include "dist/self_communicator.h"
#include "tessera/core/threads.h"
#include "tessera/dist/communicator.h"

namespace tessera::dist {

std::shared_ptr<Communicator> make_communicator() {
  if (core::launched_under_mpi()) return std::make_shared<MpiCommunicator>();
  return std::make_shared<SelfCommunicator>();
}

namespace {
std::once_flag g_world_once;
std::shared_ptr<Communicator> g_world;
}  // namespace

std::shared_ptr<Communicator> world() {
  std::call_once(g_world_once, [] { g_world = make_communicator(); });
  return g_world;
}

void finalize() {
  if (auto* mpi = dynamic_cast<MpiCommunicator*>(g_world.get())) mpi->finalize();
}

}  // namespace tessera::dist
