// FSDP on a Vision Transformer (the VNN-COMP 2023 ViT: patch Conv, class token, softmax
// attention, BatchNorm, ReLU MLPs): IBP, CROWN and alpha-CROWN bounds of a property's
// specification rows with the weights split over the ranks are bitwise those of one process,
// and so is CROWN with the backward passes' rows split too (fsdp+state). Every rank also
// holds less than the whole network. Run at 2 ranks only (one process has nothing to compare,
// 4 ranks on 2 cores take minutes; bench/vit_shard.sh measures them). Skipped when the
// shared data folder is absent.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>

#include "lirpa/mpi/shard_checks.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/sharded_param_store.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::lirpa {
namespace {

const std::string kVit = std::string(TESSERA_SHARED_DATA) + "/vnncomp2023/vit/";

TEST(ShardedVit, BitwiseIdenticalToOneProcess) {
  if (!std::filesystem::exists(kVit + "pgd_2_3_16.onnx")) GTEST_SKIP() << "no shared data at " << kVit;
  auto comm = dist::world();
  if (comm->size() != 2) GTEST_SKIP() << "run at 2 ranks";
  Graph whole = load_onnx(kVit + "pgd_2_3_16.onnx");
  Graph sharded = load_onnx(kVit + "pgd_2_3_16.onnx");
  auto store = shard_parameters(sharded, comm);
  EXPECT_LT(store->local_bytes(), store->full_bytes());
  const PropertyCase box = load_vnnlib(kVit + "pgd_2_3_16_1159.vnnlib").cases.at(0);
  const at::Tensor c = box.spec_matrix().slice(0, 0, 2);  // two rows keep alpha-CROWN short
  struct Run {
    Method method;
    bool split_rows;  // fsdp+state
  };
  for (Run run : {Run{Method::Ibp, false}, Run{Method::Crown, false}, Run{Method::AlphaCrown, false},
                  Run{Method::Crown, true}}) {
    SCOPED_TRACE(method_name(run.method) + (run.split_rows ? " fsdp+state" : " fsdp"));
    BoundOptions o;
    o.method = run.method;
    o.alpha.iterations = 1;
    // the final rows' parameters only: a full step (plane mixes per product in every
    // intermediate pass) takes minutes of CPU at 2 ranks; the sharded MLPs cover those passes
    o.alpha.intermediate = false;
    BoundsResult one = compute_bounds(whole, box.lower, box.upper, o, c);
    if (run.split_rows) o.shard_rows = comm;
    const int64_t gathers = store->gather_count();
    BoundsResult many = compute_bounds(sharded, box.lower, box.upper, o, c);
    EXPECT_GT(store->gather_count(), gathers);
    EXPECT_TRUE(at::equal(one.lower, many.lower)) << one.lower - many.lower;
    EXPECT_TRUE(at::equal(one.upper, many.upper)) << one.upper - many.upper;
    EXPECT_TRUE(at::isfinite(many.lower).all().item<bool>());
    testing::expect_same_on_every_rank(many.lower, *comm);
  }
}

}  // namespace
}  // namespace tessera::lirpa
