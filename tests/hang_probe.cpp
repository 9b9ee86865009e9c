// A two-rank probe of the Communicator's hang rules around a LongWait (the barrier in which the
// other ranks wait for rank 0's solo work: checkpoint writing, validation decoding). Run under
// mpirun by tests/scripts/hang_probe_test.sh, which checks the job's exit and message:
//   slow-root: rank 0 works alone for 3x the hang timeout before the barrier; the others must
//              wait for it (long limit) and the job exits 0.
//   late-peer: rank 1 reaches the barrier 45 s late; rank 0 keeps the short limit inside the
//              LongWait and must abort the job within seconds naming rank 1.
//   frozen-root (3 ranks): rank 0 reaches the barrier and prints its pid; the script freezes it
//              there (SIGSTOP) while rank 2 is still 8 s away. Rank 0 has arrived, so the others
//              must not give it the long limit: they abort within seconds naming it silent.
// The late ranks stay away long enough for a loaded machine: rank 1 of late-peer past the time
// the script allows for the abort (30 s), rank 2 of frozen-root past the freeze.

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "trainer/distributed/mpi_context.h"

int main(int argc, char** argv) {
  nmt::distributed::MpiContext mpi(&argc, &argv);
  auto& world = mpi.world();
  const bool slow_root = argc > 1 && std::strcmp(argv[1], "slow-root") == 0;
  const bool late_peer = argc > 1 && std::strcmp(argv[1], "late-peer") == 0;
  const bool frozen_root = argc > 1 && std::strcmp(argv[1], "frozen-root") == 0;
  if (!slow_root && !late_peer && !frozen_root) {
    std::cerr << "usage: hang_probe slow-root|late-peer|frozen-root\n";
    return 2;
  }
  nmt::distributed::HangOptions hang;
  hang.timeout_s = 2.0;
  hang.root_grace_s = 2.0;
  hang.long_timeout_s = 600.0;
  world.watch_for_hangs(hang);
  world.set_step(1);
  world.barrier();  // everyone up and watching
  if ((slow_root && world.is_root()) || (late_peer && world.rank() == 1)) {
    std::this_thread::sleep_for(std::chrono::seconds(slow_root ? 6 : 45));
  }
  if (frozen_root && world.rank() == 2) std::this_thread::sleep_for(std::chrono::seconds(8));
  if (frozen_root && world.is_root())
    std::cout << "rank 0 at the barrier, pid " << getpid() << std::endl;
  {
    nmt::distributed::Communicator::LongWait patient(world);
    world.barrier();
  }
  if (world.is_root()) std::cout << "barrier passed\n";
  return 0;
}
