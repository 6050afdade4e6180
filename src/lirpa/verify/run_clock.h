#pragma once
// RunClock: the time budget of one verification run, agreed between ranks.
//
// Under a communicator with more than one rank (sharded verification), every rank runs the
// same passes and takes part in the same collectives, so every decision that depends on
// the clock (stop at the deadline, resize a batch) must come out the same on every rank:
// rank 0 measures and broadcasts. Every call of `expired` or `agreed` is then itself a
// collective, made at the same point on every rank, and so is the constructor: the length of
// the run is rank 0's too (each rank's own may differ, e.g. by how long it took to start).
// On one process it is a plain clock.
//
//   RunClock clock(60.0, comm);          // 60 s from now
//   while (!clock.expired()) { ... }     // the same answer on every rank
//   batch = clock.agreed(measured) > 0.2 ? batch / 2 : batch;

#include <chrono>
#include <memory>

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa::detail {

class RunClock {
 public:
  using Clock = std::chrono::steady_clock;

  /// `seconds` from now (rank 0's `seconds` on every rank); `comm` may be null (one process).
  explicit RunClock(double seconds, std::shared_ptr<dist::Communicator> comm = nullptr);

  /// The run's length in seconds, the same on every rank.
  double seconds() const { return seconds_; }

  /// Whether the deadline has passed (rank 0's clock).
  bool expired() const;
  /// Seconds since the start (this rank's clock: for reports only, never for decisions).
  double elapsed() const;
  /// Rank 0's value of a locally measured quantity.
  double agreed(double local) const;
  /// A stop test for optimisation loops (captures this clock by reference).
  auto stop_test() const {
    return [this] { return expired(); };
  }

 private:
  bool shared() const;

  std::shared_ptr<dist::Communicator> comm_;
  double seconds_;
  Clock::time_point start_, deadline_;
};

}  // namespace tessera::lirpa::detail
