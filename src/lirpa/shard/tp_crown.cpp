// CROWN's backward pass on a tensor-parallel chain. Rows are linear functions of a layer's
// output; each step pulls them back through one Linear (A_x = A_y W) and one ReLU
// relaxation. Where the rows' coefficients cover only this rank's block of neurons, the
// constants and (at a column layer) the pulled-back rows are partial sums over the ranks:
// one all-reduce makes them whole.

#include <ATen/ATen.h>

#include "lirpa/ops/registry.h"
#include "lirpa/shard/tp_detail.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa::detail {
namespace {

const ParamStore& no_params() {
  static const LocalParamStore store;
  return store;
}

int64_t offset_of(const std::vector<int64_t>& counts, int rank) {
  int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[r];
  return o;
}

}  // namespace

Interval tp_layer_input(const TpState& st, int k) {
  if (k == 0) return st.box;
  const Interval& p = st.pre.at(k - 1);
  return {p.lower.clamp_min(0), p.upper.clamp_min(0)};  // relu is monotone
}

at::Tensor tp_crown_lower(const TpNetwork& net, const TpState& st, int k, int stop, const APtr& a, bool owned,
                          TpPassRows* keep) {
  const auto& layers = net.layers();
  dist::Communicator& comm = net.comm();
  static const std::shared_ptr<const BoundOp> relu = make_relu();
  const OpEnv env{no_params(), st.dtype};
  const auto zeros = [&](int64_t n) { return at::zeros({n}, at::TensorOptions().dtype(st.dtype)); };
  APtr rows = a;
  if (keep) keep->lambda.assign(static_cast<size_t>(k), at::Tensor());
  at::Tensor bias_own = zeros(a->rows());  // constants of this rank's own rows
  at::Tensor bias_rep, bias_part;          // shared rows: equal on every rank / partial sums
  std::vector<int64_t> counts;             // own rows of every rank, once gathered
  if (!owned) {
    bias_rep = zeros(a->rows());
    bias_part = zeros(a->rows());
  }
  for (int j = k; j >= stop; --j) {
    const TpLayer& l = layers[j];
    if (l.split == TpSplit::Row && owned) {
      // a row layer's input is cut over the ranks: every rank's rows go through every block
      at::Tensor mine = rows->dense(st.dtype).reshape({rows->rows(), l.out_features}).contiguous();
      counts = comm.gather_counts(mine.size(0));
      rows = DenseA::make(comm.all_gather(mine, counts));
      owned = false;
      bias_rep = zeros(rows->rows());
      bias_part = zeros(rows->rows());
    }
    at::Tensor& bias_lin = owned ? bias_own : (l.split == TpSplit::Column ? bias_part : bias_rep);
    bias_lin = bias_lin + rows->contract(l.bias.to(st.dtype));  // + A b (b: this rank's block for a column layer)
    at::Tensor ax = tp_pull_back(l, rows->dense(st.dtype).reshape({rows->rows(), tp_local_out(l)}), st.dtype);  // A_x = A_y W
    if (l.split == TpSplit::Column && !owned) {
      ax = ax.contiguous();
      comm.all_reduce(ax, dist::ReduceOp::Sum);  // A_x = sum_r A_y[:, out_r] W[out_r, :]
    }
    rows = DenseA::make(ax);
    if (j > stop && layers[j - 1].relu && rows->rows() == 0) {
      // no rows on this rank (no unstable neurons in its block): a ReLU keeps the width
    } else if (j > stop && layers[j - 1].relu) {
      if (keep) keep->lambda[j - 1] = rows->dense(st.dtype).reshape({rows->rows(), -1});  // coefficients of relu(z_{j-1})
      BackwardContext ctx;
      ctx.input_bounds = {st.pre[j - 1]};  // local block for a column layer's neurons
      Backward back = relu->backward(env, rows, ctx);
      const bool local = layers[j - 1].split == TpSplit::Column;
      at::Tensor& bias_relu = owned ? bias_own : (local ? bias_part : bias_rep);
      if (back.bias.defined()) bias_relu = bias_relu + back.bias;
      rows = back.inputs.at(0);
    } else if (j > stop) {
      TESSERA_THROW(InvalidInput, "TP layer ", j - 1, " has no ReLU after it");
    }
  }
  const Interval in = tp_layer_input(st, stop);
  if (keep && stop == 0) keep->input = rows->dense(st.dtype).reshape({rows->rows(), -1});
  at::Tensor lb = rows->rows() == 0 ? zeros(0) : rows->concretize_lower(in.lower[0], in.upper[0]);  // min over the box
  if (owned) return bias_own + lb;
  bias_part = bias_part.contiguous();
  comm.all_reduce(bias_part, dist::ReduceOp::Sum);
  lb = bias_rep + bias_part + lb;
  if (counts.empty()) return lb;
  const int64_t o = offset_of(counts, comm.rank());
  return lb.slice(0, o, o + counts[comm.rank()]) + bias_own;  // this rank's own rows
}

}  // namespace tessera::lirpa::detail
