"""LU, Cholesky, QR and LDL factorizations and the solves built on them (not in the torch dialect), decomposed by tsjit
(tsjit/mlir/linear_algebra.py) into loops over the static sizes, lowered to linalg and run on IREE against eager:
one program, so that IREE compiles once."""

from __future__ import annotations

import pytest
import torch
from mlir_corpus import assert_close

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


def factorizations_and_solves(a: torch.Tensor, b: torch.Tensor, wide: torch.Tensor, spd: torch.Tensor):
    lu, pivots, info = torch.linalg.lu_factor_ex(a)
    cholesky = torch.linalg.cholesky(spd)
    return (torch.linalg.solve_ex(a, b), torch.linalg.solve(a, b[:, 0]), torch.linalg.solve(a, b.t(), left=False),
            torch.linalg.inv_ex(a), lu, pivots, info, torch.linalg.lu_factor(wide), torch.linalg.lu(wide),
            torch.lu_unpack(lu, pivots), torch.linalg.lu_solve(lu, pivots, b, adjoint=True),
            torch.linalg.lu_solve(lu, pivots, b.t(), left=False),
            torch.linalg.solve_triangular(a, b, upper=True),
            torch.linalg.solve_triangular(a, b.t(), upper=False, left=False, unitriangular=True),
            torch.triangular_solve(b, a), torch.triangular_solve(b, a, False, True, False),
            cholesky, torch.linalg.cholesky_ex(spd, upper=True), torch.cholesky_solve(b, cholesky),
            torch.cholesky_inverse(cholesky), torch.cholesky_inverse(cholesky.t(), upper=True),
            torch.linalg.tensorsolve(a.reshape(5, 5, 1), b[:, 0]), torch.linalg.tensorinv(a.reshape(5, 1, 5), 2))


@pytest.mark.filterwarnings("ignore:torch.(triangular_solve|lu_solve) is deprecated")
def test_lu_and_cholesky_solves_on_iree():
    """Square and wide LU with row exchanges (pivots and info as LAPACK's), left and right solves, the adjoint,
    triangular solves reading one triangle, and Cholesky of a positive definite matrix."""
    a, b, wide, m = torch.randn(5, 5), torch.randn(5, 3), torch.randn(3, 5), torch.randn(5, 5)
    inputs = (a, b, wide, m @ m.t() + torch.eye(5))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(factorizations_and_solves), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), factorizations_and_solves(*inputs))


def singular(a: torch.Tensor):
    return torch.linalg.lu_factor_ex(a), torch.linalg.cholesky_ex(a)


def test_info_of_singular_and_indefinite_matrices_on_iree():
    """info: the first zero pivot of LU (1-based), the first non-positive leading minor of Cholesky."""
    a = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]])
    run = iree.compile(tsjit.mlir.compile(tsjit.script(singular), [a], output_type="linalg-on-tensors"))
    (lu, pivots, info), (_, cholesky_info) = run(a)
    (lu_expected, pivots_expected, info_expected), (_, cholesky_info_expected) = singular(a)
    assert_close((lu, pivots, info, cholesky_info), (lu_expected, pivots_expected, info_expected,
                                                      cholesky_info_expected))


def householder_and_ldl(a: torch.Tensor, tall: torch.Tensor, wide: torch.Tensor, b: torch.Tensor,
                        symmetric: torch.Tensor):
    a_qr, tau = torch.geqrf(tall)
    return (torch.geqrf(a), torch.geqrf(wide), torch.linalg.householder_product(a_qr, tau), torch.qr(a),
            torch.linalg.qr(tall), torch.linalg.qr(tall, "complete"), torch.linalg.qr(wide),
            torch.linalg.lstsq(tall, b, driver="gels"), torch.linalg.lstsq(wide, b[:3], driver="gels"),
            torch.linalg.lstsq(tall, b[:, 0], driver="gels"), torch.linalg.ldl_factor_ex(symmetric),
            torch.linalg.ldl_factor(a))


def test_householder_qr_lstsq_and_ldl_on_iree():
    """Reflectors, tau, R's signs and Q as LAPACK's (square, tall, wide, reduced and complete), least squares of a
    tall matrix (with residuals) and the least norm solution of a wide one, a vector right-hand side; LDL^T with
    1x1 and 2x2 Bunch-Kaufman pivots (a zero diagonal forces 2x2 blocks) and a column that needs no pivot."""
    torch.manual_seed(0)
    a, tall, wide, b = torch.randn(5, 5), torch.randn(5, 3), torch.randn(3, 5), torch.randn(5, 2)
    symmetric = torch.tensor([[0.0, 1.0, 2.0, 0.5], [1.0, 0.0, 3.0, 1.0], [2.0, 3.0, 0.0, 4.0], [0.5, 1.0, 4.0, 9.0]])
    inputs = (a, tall, wide, b, symmetric)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(householder_and_ldl), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), householder_and_ldl(*inputs))


def applied_reflectors(reflectors: torch.Tensor, tau: torch.Tensor, c: torch.Tensor, row: torch.Tensor,
                       batch: torch.Tensor, batch_tau: torch.Tensor, batch_c: torch.Tensor):
    return (torch.ormqr(reflectors, tau, c, left=True, transpose=True), torch.ormqr(reflectors, tau, c),
            torch.ormqr(reflectors, tau, row, left=False),
            torch.ormqr(reflectors, tau, row, left=False, transpose=True),
            torch.ormqr(batch, batch_tau, batch_c, True, True))


def test_ormqr_on_iree():
    """Q and Q^T of geqrf's reflectors applied on the left and on the right, fewer reflectors than rows, batched."""
    torch.manual_seed(0)
    reflectors, tau = torch.geqrf(torch.randn(5, 3))
    batch, batch_tau = torch.geqrf(torch.randn(2, 4, 4))
    inputs = (reflectors, tau, torch.randn(5, 4), torch.randn(2, 5), batch, batch_tau, torch.randn(2, 4, 3))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(applied_reflectors), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), applied_reflectors(*inputs))


def matrix_exponentials(a: torch.Tensor, batch: torch.Tensor, zero: torch.Tensor, double: torch.Tensor):
    return (torch.matrix_exp(a), torch.linalg.matrix_exp(batch), torch.matrix_exp(zero), torch.matrix_exp(double),
            torch.matrix_exp(a * 10))


def test_matrix_exp_on_iree():
    """Scaling and squaring: matrices of small and large norms in one batch (each halved as often as it needs), no
    halving at all (a zero matrix), float64."""
    torch.manual_seed(0)
    inputs = (torch.randn(5, 5), torch.randn(2, 3, 3) * torch.tensor([0.01, 3.0]).reshape(2, 1, 1), torch.zeros(3, 3),
              torch.randn(4, 4, dtype=torch.float64) * 4)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(matrix_exponentials), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), matrix_exponentials(*inputs))


def ldl_solves(LD: torch.Tensor, pivots: torch.Tensor, B: torch.Tensor, LD_batch: torch.Tensor,
               pivots_batch: torch.Tensor, B_batch: torch.Tensor):
    return torch.linalg.ldl_solve(LD, pivots, B), torch.linalg.ldl_solve(LD_batch, pivots_batch, B_batch,
                                                                         hermitian=True)


def test_ldl_solve_on_iree():
    """sytrs with the factor's pivots as data: 2x2 blocks at the start and in the middle (rows exchanged with a
    later one), 1x1 blocks, a batch whose matrices pivot differently."""
    torch.manual_seed(0)
    symmetric = torch.tensor([[0.0, 1.0, 2.0, 0.5], [1.0, 0.0, 3.0, 1.0], [2.0, 3.0, 0.0, 4.0], [0.5, 1.0, 4.0, 9.0]])
    batch = torch.randn(2, 4, 4)
    batch = torch.stack([symmetric, batch[1] + batch[1].T])
    LD, pivots = torch.linalg.ldl_factor(symmetric)
    LD_batch, pivots_batch = torch.linalg.ldl_factor(batch)
    inputs = (LD, pivots, torch.randn(4, 3), LD_batch, pivots_batch, torch.randn(2, 4, 2))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(ldl_solves), list(inputs), output_type="linalg-on-tensors"))
    assert_close(run(*inputs), ldl_solves(*inputs))
