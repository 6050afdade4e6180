#pragma once
// Validation shared by the communicator implementations.

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace tessera::dist::detail {

/// Throws unless `t` is a defined, contiguous CPU tensor of float32/float64/int32/int64.
void check_comm_tensor(const at::Tensor& t, const char* op);

/// Number of elements in one row (product of the trailing dimensions; 1 for 1-D).
int64_t row_elements(const at::Tensor& t);

/// Shape of a tensor with `rows` rows and `like`'s trailing dimensions.
std::vector<int64_t> shape_with_rows(const at::Tensor& like, int64_t rows);

/// Throws unless `counts` has one non-negative entry per rank.
void check_counts(const std::vector<int64_t>& counts, int size, const char* op);

int64_t sum(const std::vector<int64_t>& counts);

}  // namespace tessera::dist::detail
