#include "dist/mpi_communicator.h"

#include <ATen/ATen.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include "dist/tensor_checks.h"
#include "tessera/core/error.h"

namespace tessera::dist {
namespace {

constexpr int kExchangeTag = 7101;
// Element counts per MPI call stay below INT_MAX; larger buffers go in chunks.
constexpr int64_t kChunk = int64_t{1} << 30;

void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  TESSERA_THROW(DistributedError, what, " failed: ", std::string(text, length));
}

MPI_Datatype mpi_type(at::ScalarType s) {
  switch (s) {
    case at::kFloat: return MPI_FLOAT;
    case at::kDouble: return MPI_DOUBLE;
    case at::kInt: return MPI_INT32_T;
    case at::kLong: return MPI_INT64_T;
    default: TESSERA_THROW(Unsupported, "no MPI datatype for ", s);
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return MPI_SUM;
    case ReduceOp::Max: return MPI_MAX;
    case ReduceOp::Min: return MPI_MIN;
  }
  return MPI_SUM;
}

// A contiguous MPI datatype of one row, so that counts and displacements are in rows.
class RowType {
 public:
  explicit RowType(const at::Tensor& t) {
    int64_t elems = detail::row_elements(t);
    TESSERA_CHECK(elems <= INT_MAX, Unsupported, "rows of ", elems, " elements are too long for MPI");
    check_mpi(MPI_Type_contiguous(static_cast<int>(elems), mpi_type(t.scalar_type()), &type_),
              "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
  }
  ~RowType() { MPI_Type_free(&type_); }
  RowType(const RowType&) = delete;
  RowType& operator=(const RowType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

std::vector<int> to_int(const std::vector<int64_t>& counts, const char* op) {
  std::vector<int> out;
  for (int64_t c : counts) {
    TESSERA_CHECK(c <= INT_MAX, Unsupported, op, ": ", c, " rows exceed MPI's int count");
    out.push_back(static_cast<int>(c));
  }
  return out;
}

std::vector<int> displacements(const std::vector<int>& counts, const char* op) {
  std::vector<int> displs(counts.size(), 0);
  int64_t offset = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    TESSERA_CHECK(offset <= INT_MAX, Unsupported, op, ": row offset ", offset, " exceeds MPI's int");
    displs[r] = static_cast<int>(offset);
    offset += counts[r];
  }
  return displs;
}

class MpiPendingExchange final : public PendingExchange {
 public:
  std::vector<at::Tensor> send_buffers;  // kept alive until the sends complete
  std::vector<at::Tensor> receive_buffers;
  std::vector<MPI_Request> requests;

  std::vector<at::Tensor> wait() override {
    if (!requests.empty()) {
      check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
                "neighbour_exchange wait");
      requests.clear();
    }
    send_buffers.clear();
    return std::move(receive_buffers);
  }
  ~MpiPendingExchange() override {
    if (!requests.empty()) MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }
};

}  // namespace

MpiCommunicator::MpiCommunicator() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  }
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

// Nothing at destruction: freeing the communicator is collective, and a rank that exits
// early must not wait for the others (finalize() frees it on the success path).
MpiCommunicator::~MpiCommunicator() = default;

void MpiCommunicator::all_reduce(at::Tensor& t, ReduceOp op) {
  detail::check_comm_tensor(t, "all_reduce");
  auto* base = static_cast<char*>(t.data_ptr());
  const int64_t n = t.numel();
  const int64_t item = t.element_size();
  for (int64_t start = 0; start < n; start += kChunk) {
    int count = static_cast<int>(std::min(kChunk, n - start));
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, base + start * item, count, mpi_type(t.scalar_type()),
                            mpi_op(op), comm_),
              "MPI_Allreduce");
  }
}

at::Tensor MpiCommunicator::all_gather(const at::Tensor& t, const std::vector<int64_t>& counts) {
  detail::check_comm_tensor(t, "all_gather");
  detail::check_counts(counts, size_, "all_gather");
  TESSERA_CHECK(counts[rank_] == t.size(0), DimensionMismatch, "all_gather: rank ", rank_, " has ",
                t.size(0), " rows but the counts say ", counts[rank_]);
  at::Tensor out = at::empty(detail::shape_with_rows(t, detail::sum(counts)), t.options());
  std::vector<int> n = to_int(counts, "all_gather");
  std::vector<int> displs = displacements(n, "all_gather");
  RowType row(t);
  check_mpi(MPI_Allgatherv(t.data_ptr(), n[rank_], row.get(), out.data_ptr(), n.data(),
                           displs.data(), row.get(), comm_),
            "MPI_Allgatherv");
  return out;
}

at::Tensor MpiCommunicator::reduce_scatter(const at::Tensor& t, const std::vector<int64_t>& counts) {
  detail::check_comm_tensor(t, "reduce_scatter");
  detail::check_counts(counts, size_, "reduce_scatter");
  TESSERA_CHECK(detail::sum(counts) == t.size(0), DimensionMismatch, "reduce_scatter: counts sum to ",
                detail::sum(counts), " but the tensor has ", t.size(0), " rows");
  at::Tensor out = at::empty(detail::shape_with_rows(t, counts[rank_]), t.options());
  // Counts in elements: MPI reductions need a predefined datatype.
  const int64_t row = detail::row_elements(t);
  std::vector<int64_t> elems;
  for (int64_t c : counts) elems.push_back(c * row);
  std::vector<int> n = to_int(elems, "reduce_scatter");
  check_mpi(MPI_Reduce_scatter(t.data_ptr(), out.data_ptr(), n.data(), mpi_type(t.scalar_type()),
                               MPI_SUM, comm_),
            "MPI_Reduce_scatter");
  return out;
}

void MpiCommunicator::broadcast(at::Tensor& t, int root) {
  detail::check_comm_tensor(t, "broadcast");
  TESSERA_CHECK(root >= 0 && root < size_, InvalidInput, "broadcast: root ", root,
                " out of range for ", size_, " ranks");
  auto* base = static_cast<char*>(t.data_ptr());
  const int64_t n = t.numel();
  const int64_t item = t.element_size();
  for (int64_t start = 0; start < n; start += kChunk) {
    int count = static_cast<int>(std::min(kChunk, n - start));
    check_mpi(MPI_Bcast(base + start * item, count, mpi_type(t.scalar_type()), root, comm_),
              "MPI_Bcast");
  }
}

std::unique_ptr<PendingExchange> MpiCommunicator::start_neighbour_exchange(const at::Tensor& x,
                                                                            const NeighbourPlan& plan) {
  detail::check_comm_tensor(x, "neighbour_exchange");
  const size_t peers = plan.peers.size();
  TESSERA_CHECK(plan.send_index.size() == peers && plan.recv_rows.size() == peers, InvalidInput,
                "neighbour_exchange: plan has ", peers, " peers but ", plan.send_index.size(),
                " send lists and ", plan.recv_rows.size(), " receive counts");
  auto pending = std::make_unique<MpiPendingExchange>();
  const int64_t row = detail::row_elements(x);
  const MPI_Datatype type = mpi_type(x.scalar_type());
  // Receives first, so that sends find them posted.
  for (size_t i = 0; i < peers; ++i) {
    TESSERA_CHECK(plan.peers[i] >= 0 && plan.peers[i] < size_, InvalidInput,
                  "neighbour_exchange: peer ", plan.peers[i], " out of range for ", size_, " ranks");
    at::Tensor buffer = at::empty(detail::shape_with_rows(x, plan.recv_rows[i]), x.options());
    int count = to_int({plan.recv_rows[i] * row}, "neighbour_exchange")[0];
    pending->requests.emplace_back();
    check_mpi(MPI_Irecv(buffer.data_ptr(), count, type, plan.peers[i], kExchangeTag, comm_,
                        &pending->requests.back()),
              "MPI_Irecv");
    pending->receive_buffers.push_back(buffer);
  }
  for (size_t i = 0; i < peers; ++i) {
    // send_i = x[send_index_i]
    at::Tensor buffer = x.index_select(0, plan.send_index[i]).contiguous();
    int count = to_int({buffer.numel()}, "neighbour_exchange")[0];
    pending->requests.emplace_back();
    check_mpi(MPI_Isend(buffer.data_ptr(), count, type, plan.peers[i], kExchangeTag, comm_,
                        &pending->requests.back()),
              "MPI_Isend");
    pending->send_buffers.push_back(buffer);
  }
  return pending;
}

void MpiCommunicator::finalize() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  MPI_Finalize();
}

void MpiCommunicator::barrier() { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

void MpiCommunicator::abort(int code, const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this only satisfies [[noreturn]]
}

MPI_Comm duplicate_for_library(const Communicator& comm, const std::string& library) {
  MPI_Comm base = MPI_COMM_SELF;
  if (const auto* mpi = dynamic_cast<const MpiCommunicator*>(&comm)) {
    base = mpi->handle();
  } else {
    TESSERA_CHECK(comm.size() == 1, Unsupported, library, " needs an MPI communicator, got '", comm.kind(),
                  "' with ", comm.size(), " ranks");
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      int provided = 0;
      check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    }
  }
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(base, &out), "MPI_Comm_dup");
  return out;
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

}  // namespace tessera::dist
