// RunClock: see run_clock.h.

#include "lirpa/verify/run_clock.h"

#include <ATen/ATen.h>

#include "tessera/dist/communicator.h"

namespace tessera::lirpa::detail {

RunClock::RunClock(double seconds, std::shared_ptr<dist::Communicator> comm)
    : comm_(std::move(comm)),
      seconds_(agreed(seconds)),
      start_(Clock::now()),
      deadline_(start_ + std::chrono::microseconds(static_cast<int64_t>(seconds_ * 1e6))) {}

bool RunClock::shared() const { return comm_ && comm_->size() > 1; }

double RunClock::elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

double RunClock::agreed(double local) const {
  if (!shared()) return local;
  at::Tensor t = at::full({1}, local, at::kDouble);
  comm_->broadcast(t, 0);  // rank 0's measurement
  return t.item<double>();
}

bool RunClock::expired() const {
  bool mine = Clock::now() >= deadline_;
  return shared() ? agreed(mine ? 1.0 : 0.0) > 0.5 : mine;
}

}  // namespace tessera::lirpa::detail
