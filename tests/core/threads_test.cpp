#include <gtest/gtest.h>

#include <ATen/Parallel.h>
#include <omp.h>

#include <cstdlib>
#include <string>

#include "tessera/core/error.h"
#include "tessera/core/omp_wait.h"
#include "tessera/core/threads.h"

namespace tessera::core {
namespace {

// Sets or clears an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) setenv(name, value, 1); else unsetenv(name);
  }
  ~ScopedEnv() { if (had_) setenv(name_, old_.c_str(), 1); else unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(Threads, ExplicitRequestWins) {
  ScopedEnv env("TESSERA_THREADS", "3");
  ThreadConfig c = resolve_threads(2);
  EXPECT_EQ(c.threads, 2);
  EXPECT_EQ(c.source, ThreadSource::Explicit);
}

TEST(Threads, EnvironmentBeatsMpiAndHardware) {
  ScopedEnv env("TESSERA_THREADS", "3");
  ScopedEnv mpi("OMPI_COMM_WORLD_SIZE", "4");
  ThreadConfig c = resolve_threads(0);
  EXPECT_EQ(c.threads, 3);
  EXPECT_EQ(c.source, ThreadSource::Environment);
}

TEST(Threads, OneThreadPerRankUnderMpi) {
  ScopedEnv env("TESSERA_THREADS", nullptr);
  ScopedEnv mpi("OMPI_COMM_WORLD_SIZE", "4");
  EXPECT_TRUE(launched_under_mpi());
  ThreadConfig c = resolve_threads(0);
  EXPECT_EQ(c.threads, 1);
  EXPECT_EQ(c.source, ThreadSource::MpiDefault);
}

TEST(Threads, FreeCoresWhenSomeButNotAllAreTaken) {
  EXPECT_EQ(threads_for_load(2, 0), 2);
  EXPECT_EQ(threads_for_load(2, 1), 1);   // one busy process on 2 cores: one thread
  EXPECT_EQ(threads_for_load(2, 2), 2);   // every core taken: every core (more of the time)
  EXPECT_EQ(threads_for_load(2, 7), 2);
  EXPECT_EQ(threads_for_load(16, 3), 13);
  EXPECT_EQ(threads_for_load(1, 1), 1);
  EXPECT_EQ(threads_for_load(0, 0), 1);
}

TEST(Threads, LoadAtStartIsTheDefaultAfterEnvironmentAndMpi) {
  ScopedEnv env("TESSERA_THREADS", nullptr);
  ScopedEnv mpi("OMPI_COMM_WORLD_SIZE", nullptr);
  ScopedEnv busy(TESSERA_BUSY_AT_START, "1");
  if (launched_under_mpi()) GTEST_SKIP() << "started under an MPI launcher";
  ThreadConfig c = resolve_threads(0);
  EXPECT_EQ(c.busy_at_start, 1);
  EXPECT_EQ(c.threads, threads_for_load(c.cores, 1));
  EXPECT_EQ(c.source, c.cores > 1 ? ThreadSource::Load : ThreadSource::Hardware);
  if (c.cores > 1) {
    EXPECT_EQ(describe(c), "the free cores (" + std::to_string(c.cores) + " cores, 1 other process running when counted)");
  }
  EXPECT_EQ(resolve_threads(3).threads, 3);  // --threads wins
  {
    ScopedEnv set("TESSERA_THREADS", "3");
    EXPECT_EQ(resolve_threads(0).threads, 3);
    EXPECT_EQ(describe(resolve_threads(0)), "TESSERA_THREADS");
  }
  {
    ScopedEnv under("OMPI_COMM_WORLD_SIZE", "2");
    EXPECT_EQ(resolve_threads(0).threads, 1);
    EXPECT_EQ(resolve_threads(0).source, ThreadSource::MpiDefault);
  }
  {
    ScopedEnv all(TESSERA_BUSY_AT_START, std::to_string(c.cores).c_str());
    EXPECT_EQ(resolve_threads(0).threads, c.cores);
    EXPECT_EQ(resolve_threads(0).source, ThreadSource::Hardware);
  }
  ScopedEnv none(TESSERA_BUSY_AT_START, nullptr);
  EXPECT_EQ(resolve_threads(0).threads, c.cores);
  EXPECT_EQ(describe(resolve_threads(0)), "every core (" + std::to_string(c.cores) + (c.cores == 1 ? " core)" : " cores)"));
}

TEST(Threads, ASecondSamplingOnlyLowersTheBusyCount) {
  ThreadConfig load;
  load.cores = 4, load.busy_at_start = 2, load.threads = 2, load.source = ThreadSource::Load;
  ThreadConfig settled = confirm_load(load, 0);   // the one counted at start has settled
  EXPECT_EQ(settled.threads, 4);
  EXPECT_EQ(settled.source, ThreadSource::Hardware);
  EXPECT_EQ(settled.busy_at_start, 0);
  ThreadConfig one = confirm_load(load, 1);
  EXPECT_EQ(one.threads, 3);
  EXPECT_EQ(one.source, ThreadSource::Load);
  ThreadConfig more = confirm_load(load, 3);       // more now than at start: the start's count
  EXPECT_EQ(more.threads, 2);
  EXPECT_EQ(more.busy_at_start, 2);
  ThreadConfig asked = load;
  asked.source = ThreadSource::Explicit;
  EXPECT_EQ(confirm_load(asked, 0).threads, 2);    // a count not from the load is kept
}

TEST(Threads, ACallersOwnSamplingStandsInForTheLaunchersCount) {
  ScopedEnv env("TESSERA_THREADS", nullptr);
  ScopedEnv mpi("OMPI_COMM_WORLD_SIZE", nullptr);
  ScopedEnv launcher(TESSERA_BUSY_AT_START, "0");
  if (launched_under_mpi()) GTEST_SKIP() << "started under an MPI launcher";
  const ThreadConfig c = resolve_threads(0, 1);   // Python's set_threads: busy_elsewhere() now
  EXPECT_EQ(c.busy_at_start, 1);
  EXPECT_EQ(c.threads, threads_for_load(c.cores, 1));
  EXPECT_EQ(resolve_threads(0, 0).threads, c.cores);
  EXPECT_EQ(resolve_threads(3, 1).threads, 3);
  EXPECT_THROW(resolve_threads(0, -1), InvalidInput);
  ScopedEnv blas("TESSERA_BLAS_THREADS", nullptr);
  const ThreadConfig applied = apply_threads(resolve_threads(1, 0));
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_EQ(omp_get_max_threads(), 1);
  EXPECT_EQ(applied_threads().threads, 1);
  EXPECT_EQ(applied.source, ThreadSource::Explicit);
}

TEST(Threads, SetupConfirmsTheLaunchersCountBySamplingAgain) {
  ScopedEnv env("TESSERA_THREADS", nullptr);
  ScopedEnv mpi("OMPI_COMM_WORLD_SIZE", nullptr);
  ScopedEnv blas("TESSERA_BLAS_THREADS", nullptr);
  ScopedEnv launcher(TESSERA_BUSY_AT_START, "1");   // counted at start: a pipeline's other end
  if (launched_under_mpi()) GTEST_SKIP() << "started under an MPI launcher";
  const int cores = resolve_threads(0).cores;
  if (cores < 2) GTEST_SKIP() << "one core: the load never lowers the count";
  const ThreadConfig settled = setup_threads(0, [] { return 0; });   // gone by the second sampling
  EXPECT_EQ(settled.threads, cores);
  EXPECT_EQ(settled.source, ThreadSource::Hardware);
  EXPECT_EQ(at::get_num_threads(), cores);
  const ThreadConfig still = setup_threads(0, [] { return 1; });     // still busy
  EXPECT_EQ(still.threads, cores - 1);
  EXPECT_EQ(still.source, ThreadSource::Load);
  EXPECT_EQ(at::get_num_threads(), cores - 1);
  setup_threads(0, [] { return 0; });
}

TEST(Threads, BadEnvironmentValueIsAClearError) {
  ScopedEnv env("TESSERA_THREADS", "many");
  EXPECT_THROW(resolve_threads(0), InvalidInput);
  ScopedEnv zero("TESSERA_THREADS", "0");
  EXPECT_THROW(resolve_threads(0), InvalidInput);
  ScopedEnv ok("TESSERA_THREADS", "2");
  ScopedEnv busy(TESSERA_BUSY_AT_START, "-1");
  EXPECT_THROW(resolve_threads(0), InvalidInput);
}

TEST(Threads, SetupAppliesToAtenOpenMpAndBlas) {
  ScopedEnv blas("TESSERA_BLAS_THREADS", "1");
  ThreadConfig c = setup_threads(2);
  EXPECT_EQ(at::get_num_threads(), 2);
  EXPECT_EQ(omp_get_max_threads(), 2);
  EXPECT_EQ(c.blas_threads, 1);
  if (blas_threads() != -1) EXPECT_EQ(blas_threads(), 1);
}

TEST(Threads, ScopedBlasThreadsRestores) {
  if (!set_blas_threads(2)) GTEST_SKIP() << "this BLAS does not expose its thread count";
  {
    ScopedBlasThreads one(1);
    EXPECT_EQ(blas_threads(), 1);
  }
  EXPECT_EQ(blas_threads(), 2);
}

// Found through Python: torch.set_num_threads(1) came back as 2 after a CHOLMOD solve,
// because restoring OpenBLAS's (OpenMP) thread count also set OpenMP's.
TEST(Threads, ScopedBlasThreadsRestoresTheCallersOpenMpThreads) {
  setup_threads(2);
  at::set_num_threads(1);  // the caller asks for one intra-op thread; OpenBLAS still says 2
  { ScopedBlasThreads one(1); }
  EXPECT_EQ(omp_get_max_threads(), 1);
  EXPECT_EQ(at::get_num_threads(), 1);
  setup_threads(2);
  { ScopedBlasThreads one(1); }
  EXPECT_EQ(at::get_num_threads(), 2);
}

// Under ctest (which sets GLOG_minloglevel for every gtest), the tests run two at a time and
// must not spin: OMP_WAIT_POLICY is the busy machine's policy too. A list-valued ENVIRONMENT
// given to gtest_discover_tests set only its first variable, and this failed.
TEST(Threads, CtestRunsTheTestsWithTheBusyMachinesWaitPolicy) {
  if (std::getenv("GLOG_minloglevel") == nullptr) GTEST_SKIP() << "not run by ctest";
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  ASSERT_NE(policy, nullptr);
  EXPECT_STREQ(policy, TESSERA_BUSY_OMP_WAIT_POLICY);
}

}  // namespace
}  // namespace tessera::core
