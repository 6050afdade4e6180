#pragma once
/// @file deigsh.h
/// A few eigenpairs of a symmetric matrix distributed by rows (DSparseTensor),
/// differentiable in its values: eigsh() across ranks.
///
/// The engine is eigsh()'s native block thick-restart Lanczos, the same code, run on the
/// distributed product (halo exchange) with inner products summed over the ranks and the
/// QR of a tall block by TSQR; the random starting block is drawn in full on every rank, so
/// 1, 2 or 4 ranks follow one process's native run up to the order of floating-point sums.
/// Which::Largest and Which::Smallest use A; Which::Nearest runs Lanczos on (A - σ I)^{-1}
/// applied by MUMPS's distributed LU of A - σ I (NotCompiled without MUMPS). When the
/// Krylov space would cover the whole space (n small) the rows are gathered and a dense
/// eigensolver runs on every rank. Backend Spectra is single-process (Unsupported here);
/// Auto means Native.
///
/// Gradients (one autograd node, collective: every rank calls backward):
///  - eigenvalues by Hellmann-Feynman, dλ_i/dA_ab = v_ia v_ib on each rank's stored entries
///    (v_b of halo columns by one halo exchange);
///  - eigenvectors of simple eigenvalues: dL/dA = -w v^T on the pattern, w from
///    (A - λ I + c v v^T) w = (I - v v^T) dL/dv by the distributed MINRES of dsolve.
/// The eigenvalues are the same on every rank; as for every distributed output, the loss is
/// the sum of the ranks' losses, so the gradients with respect to the eigenvalues are summed
/// over the ranks in backward (a loss computed alike on every rank counts once per rank).
///
/// @code
///   auto dA = tessera::sla::DSparseTensor::from_global(comm, part, A.with_values(values));
///   tessera::sla::EigshOptions opts;
///   opts.k = 4;
///   opts.which = tessera::sla::Which::Smallest;
///   auto r = tessera::sla::deigsh(dA, opts);   // r.eigenvalues [4] everywhere, r.eigenvectors [owned, 4]
/// @endcode

#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/eigsh.h"

namespace tessera::sla {

/// k eigenpairs of the distributed symmetric A (collective). eigenvalues [k] ascending, the
/// same on every rank; eigenvectors [owned, k], this rank's rows, each column of unit norm
/// with its largest-magnitude entry positive. EigshInfo is the same on every rank. Throws as
/// eigsh() does (k out of [1, n), NaN/Inf, A clearly not symmetric: ||A x - A^T x|| for a
/// random x above 1e-10 ||A x||).
EigshResult deigsh(const DSparseTensor& a, const EigshOptions& options = {});

}  // namespace tessera::sla
