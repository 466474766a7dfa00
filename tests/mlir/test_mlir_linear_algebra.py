"""LU and Cholesky factorizations and the solves built on them (not in the torch dialect), decomposed by tsjit
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
