// ShardedParamStore: 1/P of every parameter per rank, gathered on each use (FSDP) or
// multiplied in place (tensor parallelism).

#include "tessera/lirpa/sharded_param_store.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/graph.h"

namespace tessera::lirpa {
namespace {

bool movable(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kInt || t == at::kLong;
}

}  // namespace

ShardMode parse_shard_mode(const std::string& name) {
  if (name == "none") return ShardMode::None;
  if (name == "fsdp") return ShardMode::Fsdp;
  if (name == "tp") return ShardMode::Tp;
  if (name == "fsdp+state") return ShardMode::FsdpState;
  if (name == "tp-heads") return ShardMode::TpHeads;
  TESSERA_THROW(InvalidInput, "unknown shard mode '", name, "' (use none, fsdp, tp, fsdp+state or tp-heads)");
}

std::string shard_mode_name(ShardMode mode) {
  switch (mode) {
    case ShardMode::Fsdp: return "fsdp";
    case ShardMode::Tp: return "tp";
    case ShardMode::FsdpState: return "fsdp+state";
    case ShardMode::TpHeads: return "tp-heads";
    case ShardMode::None: break;
  }
  return "none";
}

ShardedParamStore::ShardedParamStore(std::shared_ptr<dist::Communicator> comm, ShardMode mode)
    : comm_(std::move(comm)), tensor_parallel_(mode == ShardMode::Tp) {
  TESSERA_CHECK(comm_ != nullptr, InvalidInput, "ShardedParamStore needs a communicator");
  TESSERA_CHECK(mode != ShardMode::None, InvalidInput, "ShardedParamStore needs a sharded mode, not 'none'");
  TESSERA_CHECK(mode != ShardMode::TpHeads, InvalidInput,
                "tp-heads splits the network's blocks as it is loaded (load_onnx_shares), not a parameter store");
}

std::vector<int64_t> ShardedParamStore::block_counts(int64_t rows, int parts) {
  TESSERA_CHECK(parts > 0 && rows >= 0, InvalidInput, "cannot split ", rows, " rows into ", parts, " blocks");
  const int64_t block = (rows + parts - 1) / parts;  // ceil(d0 / P)
  std::vector<int64_t> counts;
  for (int r = 0; r < parts; ++r) counts.push_back(std::clamp<int64_t>(rows - r * block, 0, block));
  return counts;
}

bool ShardedParamStore::contains(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return values_.count(key) > 0;
}

const ShardedParamStore::Entry& ShardedParamStore::entry(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = values_.find(key);
  TESSERA_CHECK(it != values_.end(), InvalidInput, "no parameter named '", key, "'");
  return it->second;  // entries are never erased, only replaced by put()
}

at::Tensor ShardedParamStore::still_alive(const std::string& key, at::ScalarType dtype) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = alive_.find({key, static_cast<int>(dtype)});
  if (it == alive_.end()) return {};
  c10::intrusive_ptr<c10::StorageImpl> storage = it->second.lock();
  if (!storage) {
    alive_.erase(it);
    return {};
  }
  const Entry& e = values_.at(key);
  at::Tensor t = at::empty({0}, at::TensorOptions().dtype(dtype));
  std::vector<int64_t> strides(e.shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(e.shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * e.shape[d + 1];
  return t.set_(c10::Storage(std::move(storage)), 0, e.shape, strides);
}

void ShardedParamStore::remember(const std::string& key, const at::Tensor& whole) const {
  std::lock_guard<std::mutex> lock(mutex_);
  alive_.insert_or_assign({key, static_cast<int>(whole.scalar_type())}, whole.storage().getWeakStorageImpl());
}

at::Tensor ShardedParamStore::get_raw(const std::string& key) const {
  const Entry& e = entry(key);
  if (e.replicated) return e.block;
  if (at::Tensor held = still_alive(key, e.block.scalar_type()); held.defined()) return held;
  ++gathers_;
  at::Tensor whole = comm_->all_gather(e.block, e.counts).view(e.shape);  // concatenation only: values unchanged
  remember(key, whole);
  return whole;
}

at::Tensor ShardedParamStore::get(const std::string& key, at::ScalarType dtype) const {
  const Entry& e = entry(key);
  if (e.replicated) return e.block.scalar_type() == dtype ? e.block : e.block.to(dtype);
  if (e.block.scalar_type() == dtype) return get_raw(key);
  if (at::Tensor held = still_alive(key, dtype); held.defined()) return held;
  // float32 -> float64 is exact and element-wise, as in LocalParamStore
  at::Tensor whole = get_raw(key).to(dtype).contiguous();
  remember(key, whole);
  return whole;
}

std::vector<int64_t> ShardedParamStore::shape(const std::string& key) const { return entry(key).shape; }

at::Tensor ShardedParamStore::get_columns(const std::string& key, at::ScalarType dtype, int64_t c0,
                                          int64_t n) const {
  const Entry& e = entry(key);
  detail::check_block(e.shape, 1, c0, n, key);
  if (e.replicated) return e.block.narrow(1, c0, n).to(dtype).contiguous();
  if (at::Tensor held = still_alive(key, dtype); held.defined()) return held.narrow(1, c0, n).contiguous();
  ++gathers_;
  // W[:, c0:c0+n] = concatenation over ranks of W[rows_r, c0:c0+n]
  at::Tensor mine = e.block.narrow(1, c0, n).contiguous();
  return comm_->all_gather(mine, e.counts).to(dtype).contiguous();
}

at::Tensor ShardedParamStore::get_rows(const std::string& key, at::ScalarType dtype, int64_t r0, int64_t n) const {
  const Entry& e = entry(key);
  detail::check_block(e.shape, 0, r0, n, key);
  if (e.replicated) return e.block.narrow(0, r0, n).to(dtype).contiguous();
  if (at::Tensor held = still_alive(key, dtype); held.defined()) return held.narrow(0, r0, n).contiguous();
  ++gathers_;
  // rank r holds rows [s_r, s_r + count_r); it sends their intersection with [r0, r0 + n)
  std::vector<int64_t> counts(e.counts.size());
  int64_t start = 0, my_first = 0;
  for (size_t r = 0; r < e.counts.size(); ++r) {
    const int64_t lo = std::max(start, r0), hi = std::min(start + e.counts[r], r0 + n);
    counts[r] = std::max<int64_t>(hi - lo, 0);
    if (static_cast<int>(r) == comm_->rank()) my_first = lo - start;
    start += e.counts[r];
  }
  at::Tensor mine = e.block.narrow(0, counts[comm_->rank()] > 0 ? my_first : 0, counts[comm_->rank()]);
  return comm_->all_gather(mine.contiguous(), counts).to(dtype).contiguous();
}

bool ShardedParamStore::multiplied_here(const Entry& e) const {
  return tensor_parallel_ && !e.replicated && e.shape.size() == 2;
}

int64_t ShardedParamStore::own_first_row(const Entry& e) const {
  int64_t first = 0;
  for (int r = 0; r < comm_->rank(); ++r) first += e.counts[r];
  return first;
}

at::Tensor ShardedParamStore::own_rows(const std::string& key, const Entry& e, at::ScalarType dtype) const {
  if (e.block.scalar_type() == dtype) return e.block;
  std::lock_guard<std::mutex> lock(mutex_);
  at::Tensor& converted = own_converted_[{key, static_cast<int>(dtype)}];
  if (!converted.defined()) converted = e.block.to(dtype).contiguous();
  return converted;
}

std::vector<at::Tensor> ShardedParamStore::times(const std::string& key, at::ScalarType dtype,
                                                 const std::vector<WeightOperand>& operands) const {
  const Entry& e = entry(key);
  if (!multiplied_here(e)) return ParamStore::times(key, dtype, operands);
  const int64_t n = e.shape[1], first = own_first_row(e), mine = e.counts[comm_->rank()];
  at::Tensor w = own_rows(key, e, dtype);  // W[I_r, :]
  // |W[I_r, :]| one block of columns at a time, as the gathered products do (never a whole copy)
  const int64_t width = weight_block_width(n, std::max<int64_t>(mine, 1) * at::elementSize(dtype));
  std::vector<at::Tensor> partial;  // x[.., I_r] W[I_r, :] (or |W|), flattened to [M_i, n]
  std::vector<int64_t> rows;
  for (const WeightOperand& o : operands) {
    TESSERA_CHECK(o.x.size(-1) == e.shape[0], DimensionMismatch, "product with '", key, "': operand has ",
                  o.x.size(-1), " columns, the weight ", e.shape[0], " rows");
    const int64_t x_rows = e.shape[0] == 0 ? 0 : o.x.numel() / e.shape[0];
    at::Tensor x = o.x.narrow(-1, first, mine).reshape({x_rows, mine});
    if (!o.absolute) {
      partial.push_back(at::matmul(x, w));
    } else {
      partial.push_back(at::empty({x.size(0), n}, x.options()));
      for (int64_t c0 = 0; c0 < n; c0 += width) {
        const int64_t cn = std::min(width, n - c0);
        partial.back().narrow(1, c0, cn).copy_(at::matmul(x, w.narrow(1, c0, cn).abs()));  // x |W[I_r, J]|
      }
    }
    rows.push_back(partial.back().size(0));
  }
  at::Tensor stacked = at::cat(partial).contiguous();  // [M, n]
  const int64_t m = stacked.size(0);
  at::Tensor every = comm_->all_gather(stacked, std::vector<int64_t>(comm_->size(), m));  // [P M, n]
  at::Tensor sum = every.narrow(0, 0, m).clone();
  for (int r = 1; r < comm_->size(); ++r) sum.add_(every.narrow(0, r * m, m));  // sum_r, in rank order everywhere
  std::vector<at::Tensor> ys;
  int64_t start = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    std::vector<int64_t> out_shape = operands[i].x.sizes().vec();
    out_shape.back() = n;
    ys.push_back(sum.narrow(0, start, rows[i]).view(out_shape));
    start += rows[i];
  }
  return ys;
}

at::Tensor ShardedParamStore::times_transposed(const std::string& key, at::ScalarType dtype,
                                               const at::Tensor& a) const {
  const Entry& e = entry(key);
  if (!multiplied_here(e)) return ParamStore::times_transposed(key, dtype, a);
  TESSERA_CHECK(a.size(-1) == e.shape[1], DimensionMismatch, "transposed product with '", key, "': operand has ",
                a.size(-1), " columns, the weight ", e.shape[1]);
  at::Tensor w = own_rows(key, e, dtype);                                 // W[I_r, :]
  at::Tensor mine = at::matmul(w, a.reshape({-1, e.shape[1]}).t()).contiguous();  // (A W[I_r, :]^T)^T [k_r, M]
  at::Tensor every = comm_->all_gather(mine, e.counts);                  // (A W^T)^T [k, M]
  mine = at::Tensor();                                                   // freed before the transpose's copy
  std::vector<int64_t> out_shape = a.sizes().vec();
  out_shape.back() = e.shape[0];
  return every.t().contiguous().view(out_shape);
}

void ShardedParamStore::put(const std::string& key, at::Tensor value) {
  Entry e;
  e.shape = value.sizes().vec();
  if (!movable(value.scalar_type()) || (tensor_parallel_ && value.dim() <= 1)) {  // TP keeps vectors whole
    e.replicated = true;
    e.block = value.contiguous();
  } else {
    const int64_t rows = value.dim() == 0 ? 1 : value.size(0);
    const int64_t rest = rows == 0 ? 0 : value.numel() / rows;
    e.counts = block_counts(rows, comm_->size());
    int64_t start = 0;
    for (int r = 0; r < comm_->rank(); ++r) start += e.counts[r];
    const int64_t mine = e.counts[comm_->rank()];
    at::Tensor own = (value.dim() == 0 ? value.reshape({1}) : value).narrow(0, start, mine);
    // an own contiguous copy of this rank's rows only: the whole (maybe a transposed view)
    // is never copied whole, and may be freed
    e.block = own.clone(at::MemoryFormat::Contiguous).view({mine, rest});
  }
  std::lock_guard<std::mutex> lock(mutex_);
  values_[key] = std::move(e);
  for (auto it = alive_.begin(); it != alive_.end();) it = it->first.first == key ? alive_.erase(it) : std::next(it);
  for (auto it = own_converted_.begin(); it != own_converted_.end();)
    it = it->first.first == key ? own_converted_.erase(it) : std::next(it);
}

std::vector<std::string> ShardedParamStore::keys() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (auto& [k, v] : values_) out.push_back(k);
  return out;
}

int64_t ShardedParamStore::local_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t n = 0;
  for (auto& [k, e] : values_) n += e.block.numel() * e.block.element_size();
  return n;
}

int64_t ShardedParamStore::full_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t n = 0;
  for (auto& [k, e] : values_) {
    int64_t numel = 1;
    for (int64_t d : e.shape) numel *= d;
    n += numel * e.block.element_size();
  }
  return n;
}

std::shared_ptr<ShardedParamStore> shard_parameters(Graph& graph, std::shared_ptr<dist::Communicator> comm,
                                                    ShardMode mode) {
  auto store = std::make_shared<ShardedParamStore>(std::move(comm), mode);
  ParamStore& old = graph.params();
  for (const auto& key : old.keys()) store->put(key, old.get_raw(key));
  graph.set_params(store);
  return store;
}

}  // namespace tessera::lirpa
