// Batched PGD inside many small boxes at once (one start per box): the counterexample
// search of input-splitting branch and bound on its worst sub-domains; see bab.h.

#include <ATen/ATen.h>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/bab.h"

namespace tessera::lirpa::detail {

at::Tensor box_attack(const BatchFn& f, const at::Tensor& xl, const at::Tensor& xu, const at::Tensor& start,
                      const at::Tensor& c, const at::Tensor& rhs, int steps) {
  // steps from 1/4 of each box's width down to 1/100 of it, one box per row
  return pgd_rows(f, xl, xu, start, c, rhs, steps, 0.25, 0.04).x;
}

}  // namespace tessera::lirpa::detail
