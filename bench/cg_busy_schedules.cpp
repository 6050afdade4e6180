// Three schedules of one CG, on the machine as it is and beside one busy process (issue #27:
// a 1M-DOF CG beside a busy process within 1.5x its idle time). The CG is the 5-point Poisson
// matrix on an n x n grid (b = 1, x0 = 0, ||r|| <= 1e-8 ||b||), three passes an iteration:
//   q = A p, <p, q>;   x += alpha p, r -= alpha q, <r, r>;   p = r + beta p.
// Schedules:
//  - team: OpenMP, each pass a parallel loop over fixed chunks (a barrier at its end), vectors
//    updated in place: what `tessera solve` does, less its library;
//  - one:  the same on one thread;
//  - redo: two threads that never wait long for each other: every pass's chunks may be run by
//    either thread; a thread that finds a chunk taken but unfinished after --spin-us runs it
//    itself. So that a chunk can be run twice, the passes write G generations of x, r, p, q
//    (x_k+1 = x_k + alpha p_k into another array than x_k) and a late second run stores the
//    values already there: a thread enters iteration k only when the other has passed
//    iteration k + 1 - G (the generations it could still read or write).
// Every schedule adds the chunks' inner products in chunk order: their iterates agree bit for
// bit, checked at the end (exit 1 when not).
//
//   build/bench_cg_busy_schedules [--n 1000] [--schedules team,one,redo] [--loads idle,busy]
//        [--repeats 3] [--generations 4] [--spin-us 100] [--hold-us 0]
//
// --loads busy forks a process spinning in a loop for the run. --hold-us sleeps the second
// thread of `redo` inside every 8th chunk it takes (before its writes), as a descheduled
// thread would be (the tests' check of the redo path: exit 1 when no chunk was run twice).
// One JSON line a run; one a schedule and load (median seconds).
#include <omp.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Grid {
  int64_t n = 1000, rows = 0;
  int64_t lines_per_chunk = 16;
  int chunks = 0;
  int64_t begin(int c) const { return std::min(rows, c * lines_per_chunk * n); }
  int64_t end(int c) const { return std::min(rows, (c + 1) * lines_per_chunk * n); }
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// q = A p on the grid lines of rows [a, b); returns <p, q> over them.
double stencil_dot(const Grid& g, const double* __restrict p, double* __restrict q, int64_t a, int64_t b) {
  const int64_t n = g.n;
  double s = 0.0;
  for (int64_t line = a / n; line < b / n; ++line) {
    const int64_t o = line * n;
    const double* up = line > 0 ? p + o - n : nullptr;
    const double* down = line < n - 1 ? p + o + n : nullptr;
    double ls = 0.0;
#pragma omp simd reduction(+ : ls)
    for (int64_t i = 0; i < n; ++i) {
      double v = 4.0 * p[o + i];                 // (A p)_i = 4 p_i - sum of the grid neighbours
      if (i > 0) v -= p[o + i - 1];
      if (i < n - 1) v -= p[o + i + 1];
      if (up) v -= up[i];
      if (down) v -= down[i];
      q[o + i] = v;
      ls += p[o + i] * v;
    }
    s += ls;
  }
  return s;
}

/// x1 = x0 + alpha p, r1 = r0 - alpha q on [a, b); returns <r1, r1> over them.
double step(const double* x0, const double* r0, const double* p, const double* q, double* x1, double* r1, double alpha,
            int64_t a, int64_t b) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = a; i < b; ++i) {
    x1[i] = x0[i] + alpha * p[i];
    const double ri = r0[i] - alpha * q[i];
    r1[i] = ri;
    s += ri * ri;
  }
  return s;
}

/// p1 = r + beta p0 on [a, b).
void direction(const double* r, const double* p0, double* p1, double beta, int64_t a, int64_t b) {
#pragma omp simd
  for (int64_t i = a; i < b; ++i) p1[i] = r[i] + beta * p0[i];
}

struct Outcome {
  std::vector<double> x;
  int64_t iterations = 0;
  int64_t redone = 0;       ///< chunks run a second time (redo)
  int64_t guard_waits = 0;  ///< iterations entered only after waiting for the other thread (redo)
};

constexpr double kRtol = 1e-8;

/// team and one: a parallel loop per pass, in place.
Outcome run_team(const Grid& g, int threads) {
  std::vector<double> x(g.rows, 0.0), r(g.rows, 1.0), p(g.rows, 1.0), q(g.rows), part(g.chunks);
  auto chunk_sum = [&] {
    double s = 0.0;
    for (double v : part) s += v;   // chunk order
    return s;
  };
  double rr = static_cast<double>(g.rows);
  const double stop = kRtol * std::sqrt(rr);
  int64_t k = 0;
  for (; std::sqrt(rr) > stop; ++k) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int c = 0; c < g.chunks; ++c) part[c] = stencil_dot(g, p.data(), q.data(), g.begin(c), g.end(c));
    const double alpha = rr / chunk_sum();                          // alpha = <r, r> / <p, A p>
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int c = 0; c < g.chunks; ++c)
      part[c] = step(x.data(), r.data(), p.data(), q.data(), x.data(), r.data(), alpha, g.begin(c), g.end(c));
    const double rr_new = chunk_sum();
    const double beta = rr_new / rr;                                // beta = <r', r'> / <r, r>
    rr = rr_new;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int c = 0; c < g.chunks; ++c) direction(r.data(), p.data(), p.data(), beta, g.begin(c), g.end(c));
  }
  return {std::move(x), k, 0, 0};
}

/// redo: see the file's comment. Pass e = 3 k + s (s = 0, 1, 2 as above).
class RedoCg {
 public:
  RedoCg(const Grid& g, int generations, int spin_us, int hold_us)
      : g_(g), gens_(generations), spin_s_(spin_us * 1e-6), hold_us_(hold_us), claimed_(g.chunks), done_(g.chunks),
        partial_(static_cast<size_t>(3 * generations) * g.chunks) {
    for (int v = 0; v < 4; ++v) vec_[v].assign(gens_, std::vector<double>(g.rows, 0.0));
    std::fill(vec_[R][0].begin(), vec_[R][0].end(), 1.0);
    std::fill(vec_[P][0].begin(), vec_[P][0].end(), 1.0);
    for (int c = 0; c < g.chunks; ++c) {
      claimed_[c].store(-1);
      done_[c].store(-1);
    }
    at_[0].store(-1);
    at_[1].store(-1);
  }

  Outcome run() {
    std::thread helper([this] { work(1); });
    work(0);
    helper.join();
    Outcome out;
    out.iterations = iterations_;
    out.x = vec_[X][iterations_ % gens_];
    out.redone = redone_[0] + redone_[1];
    out.guard_waits = waits_[0] + waits_[1];
    return out;
  }

 private:
  enum { X, R, P, Q };
  double* at(int v, int64_t k) { return vec_[v][k % gens_].data(); }

  double run_chunk(int64_t e, int c, double alpha, double beta) {
    const int64_t k = e / 3, a = g_.begin(c), b = g_.end(c);
    switch (e % 3) {
      case 0: return stencil_dot(g_, at(P, k), at(Q, k), a, b);
      case 1: return step(at(X, k), at(R, k), at(P, k), at(Q, k), at(X, k + 1), at(R, k + 1), alpha, a, b);
      default: direction(at(R, k + 1), at(P, k), at(P, k + 1), beta, a, b); return 0.0;
    }
  }

  void finish_chunk(int64_t e, int c, double value) {
    partial_[(e % (3 * gens_)) * g_.chunks + c].store(value, std::memory_order_relaxed);
    int64_t d = done_[c].load(std::memory_order_relaxed);
    while (d < e && !done_[c].compare_exchange_weak(d, e, std::memory_order_release)) {
    }
  }

  void work(int me) {
    double rr = static_cast<double>(g_.rows), alpha = 0.0, beta = 0.0;
    const double stop = kRtol * std::sqrt(rr);
    int64_t taken = 0;
    for (int64_t e = 0;; ++e) {
      const int64_t k = e / 3;
      if (e % 3 == 0) {
        if (!(std::sqrt(rr) > stop)) {
          if (me == 0) iterations_ = k;
          at_[me].store(INT64_MAX, std::memory_order_release);
          return;
        }
        const int64_t need = 3 * (k + 2 - gens_);   // the other may still touch generation k + 1 - G
        if (at_[1 - me].load(std::memory_order_acquire) < need) {
          ++waits_[me];
          while (at_[1 - me].load(std::memory_order_acquire) < need) sched_yield();
        }
      }
      at_[me].store(e, std::memory_order_release);
      for (int j = 0; j < g_.chunks; ++j) {      // thread 0 from the first chunk, thread 1 from the last
        const int c = me == 0 ? j : g_.chunks - 1 - j;
        int64_t cl = claimed_[c].load(std::memory_order_relaxed);
        if (cl >= e || !claimed_[c].compare_exchange_strong(cl, e, std::memory_order_acq_rel)) continue;
        if (me == 1 && hold_us_ > 0 && ++taken % 8 == 0)
          std::this_thread::sleep_for(std::chrono::microseconds(hold_us_));   // as if descheduled
        finish_chunk(e, c, run_chunk(e, c, alpha, beta));
      }
      const double t0 = now();
      for (int c = 0; c < g_.chunks; ++c) {      // the other's chunks: wait a little, then run them
        while (done_[c].load(std::memory_order_acquire) < e) {
          if (now() - t0 > spin_s_) {
            finish_chunk(e, c, run_chunk(e, c, alpha, beta));
            ++redone_[me];
            break;
          }
        }
      }
      double sum = 0.0;
      const std::atomic<double>* part = &partial_[(e % (3 * gens_)) * g_.chunks];
      for (int c = 0; c < g_.chunks; ++c) sum += part[c].load(std::memory_order_relaxed);   // chunk order
      if (e % 3 == 0) alpha = rr / sum;          // alpha = <r, r> / <p, A p>
      if (e % 3 == 1) {
        beta = sum / rr;                         // beta = <r', r'> / <r, r>
        rr = sum;
      }
    }
  }

  const Grid& g_;
  const int gens_;
  const double spin_s_;
  const int hold_us_;
  std::vector<std::vector<double>> vec_[4];
  std::vector<std::atomic<int64_t>> claimed_, done_;   // the last pass that claimed / finished each chunk
  std::vector<std::atomic<double>> partial_;           // each chunk's inner product, 3 G passes kept
  std::atomic<int64_t> at_[2];                         // the pass each thread is in
  int64_t iterations_ = 0, redone_[2] = {0, 0}, waits_[2] = {0, 0};
};

/// A process spinning in a loop while in scope (--loads busy).
class BusyProcess {
 public:
  BusyProcess() : pid_(fork()) {
    if (pid_ == 0) {
      std::atomic<uint64_t> spins{0};
      for (;;) spins.fetch_add(1, std::memory_order_relaxed);
    }
    usleep(200000);
  }
  ~BusyProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

 private:
  pid_t pid_;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    const size_t e = std::min(s.find(',', b), s.size());
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Grid g;
  std::string schedules = "team,one,redo", loads = "idle,busy";
  int repeats = 3, generations = 4, spin_us = 100, hold_us = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--n") g.n = std::atol(v.c_str());
    else if (k == "--schedules") schedules = v;
    else if (k == "--loads") loads = v;
    else if (k == "--repeats") repeats = std::atoi(v.c_str());
    else if (k == "--generations") generations = std::atoi(v.c_str());
    else if (k == "--spin-us") spin_us = std::atoi(v.c_str());
    else if (k == "--hold-us") hold_us = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "bench_cg_busy_schedules: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (g.n < 2 || repeats < 1 || generations < 3 || spin_us < 0 || hold_us < 0) {
    std::fprintf(stderr, "bench_cg_busy_schedules: needs --n >= 2, --repeats >= 1, --generations >= 3\n");
    return 2;
  }
  g.rows = g.n * g.n;
  g.chunks = static_cast<int>((g.n + g.lines_per_chunk - 1) / g.lines_per_chunk);
  std::map<std::string, std::vector<double>> seconds;
  std::vector<double> reference;
  bool agree = true, redone = false;
  for (int rep = 0; rep < repeats; ++rep) {
    for (const std::string& schedule : split(schedules)) {
      for (const std::string& load : split(loads)) {
        if (schedule != "team" && schedule != "one" && schedule != "redo") {
          std::fprintf(stderr, "bench_cg_busy_schedules: unknown schedule %s (team, one, redo)\n", schedule.c_str());
          return 2;
        }
        Outcome out;
        double t = 0.0;
        {
          std::unique_ptr<BusyProcess> busy;
          if (load == "busy") busy = std::make_unique<BusyProcess>();
          const double t0 = now();
          out = schedule == "redo" ? RedoCg(g, generations, spin_us, hold_us).run()
                                   : run_team(g, schedule == "team" ? 2 : 1);
          t = now() - t0;
        }
        if (reference.empty()) reference = out.x;
        const bool same = out.x == reference;
        agree = agree && same;
        redone = redone || out.redone > 0;
        seconds[schedule + " " + load].push_back(t);
        std::printf("{\"schedule\": \"%s\", \"load\": \"%s\", \"rows\": %lld, \"seconds\": %.4f, \"iterations\": %lld, "
                    "\"redone_chunks\": %lld, \"guard_waits\": %lld, \"same_iterates\": %s}\n",
                    schedule.c_str(), load.c_str(), static_cast<long long>(g.rows), t,
                    static_cast<long long>(out.iterations), static_cast<long long>(out.redone),
                    static_cast<long long>(out.guard_waits), same ? "true" : "false");
        std::fflush(stdout);
      }
    }
  }
  for (auto& [key, v] : seconds) {
    std::sort(v.begin(), v.end());
    const size_t h = v.size() / 2;
    const double median = v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
    std::printf("{\"case\": \"%s\", \"median_seconds\": %.4f, \"runs\": %zu}\n", key.c_str(), median, v.size());
  }
  if (!agree) std::fprintf(stderr, "bench_cg_busy_schedules: the schedules' iterates differ\n");
  const bool held_unseen = hold_us > 0 && schedules.find("redo") != std::string::npos && !redone;
  if (held_unseen)
    std::fprintf(stderr, "bench_cg_busy_schedules: --hold-us held a thread but no chunk was run twice\n");
  return agree && !held_unseen ? 0 : 1;
}
