// `tessera info`: what this build and this process are (versions, threads, ranks,
// backends), and with --check-dist a quick check that every collective agrees across ranks.

#include <ATen/Parallel.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "tessera/core/malloc_pages.h"
#include "tessera/core/omp_wait.h"
#include "tessera/core/threads.h"
#include "tessera/core/version.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/self_check.h"

namespace tessera::app {
namespace {

struct InfoOptions {
  bool json = false;
  bool check_dist = false;
};

int run_info(const InfoOptions& options) {
  auto comm = dist::world();
  nlohmann::json info = {
      {"version", core::version()},
      {"torch", core::torch_version()},
      {"communicator", comm->kind()},
      {"rank", comm->rank()},
      {"size", comm->size()},
      {"threads", at::get_num_threads()},
      {"threads_from", core::describe(core::applied_threads())},
      {"blas_threads", core::blas_threads()},
      {"omp_wait", core::omp_wait_description()},
      {"malloc_pages", core::malloc_pages_description()},
      {"served_by", served_by().empty() ? "none (a process of its own)" : served_by()},
  };
  int code = 0;
  if (options.check_dist) {
    dist::SelfCheckReport report = dist::run_self_check(*comm);
    info["check_dist"] = {{"passed", report.passed}, {"failures", report.failures}};
    code = report.passed ? 0 : 1;
  }
  if (comm->rank() == 0) {
    if (options.json) {
      std::cout << info.dump() << std::endl;
    } else {
      for (auto& [key, value] : info.items()) std::cout << key << ": " << value.dump() << "\n";
    }
  }
  return code;
}

}  // namespace

void add_info_command(CLI::App& app, CommandBody& body) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "versions, threads, ranks; --check-dist tests collectives");
  cmd->add_flag("--json", options->json, "print one JSON object");
  cmd->add_flag("--check-dist", options->check_dist,
                "run every collective across the ranks and compare with the expected result");
  cmd->callback([options, &body] { body = [options] { return run_info(*options); }; });
}

}  // namespace tessera::app
