"""Singular values, symmetric eigenvalues and what is built on them (not in the torch dialect), decomposed by tsjit
(tsjit/mlir/spectral.py) into cyclic Jacobi loops, lowered to linalg and run on IREE against eager: one program,
so that IREE compiles once. Singular vectors and eigenvectors are compared up to their signs (LAPACK's are one
choice among equally valid ones)."""

from __future__ import annotations

import torch
from mlir_corpus import assert_close

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


def spectral(a: torch.Tensor, wide: torch.Tensor, rank_two: torch.Tensor, symmetric: torch.Tensor):
    u, s, v = torch.svd(a)
    wide_u, wide_s, wide_vh = torch.linalg.svd(wide, full_matrices=False)
    values, vectors = torch.linalg.eigh(symmetric, UPLO="U")
    return ((torch.linalg.matrix_rank(rank_two), torch.linalg.matrix_rank(rank_two, hermitian=True, rtol=1e-4),
             torch.pinverse(rank_two, rcond=1e-4), torch.linalg.matrix_norm(wide, "nuc", keepdim=True), values, s,
             wide_s), (u, v, wide_u, wide_vh, vectors))


def test_jacobi_svd_and_eigh_on_iree():
    """Square, wide and rank-deficient matrices (pinverse's tolerance drops the zero singular values, matrix_rank
    counts the others), the
    symmetric matrix read from its upper triangle; the factors multiply back to the matrix and agree with eager's up
    to sign. (5 x 5: type refinement runs a loop of at most 64 iterations one by one, the 70 rotations of 7 sweeps
    as a whole.)"""
    torch.manual_seed(0)
    a, wide, m = torch.randn(5, 5), torch.randn(3, 5), torch.randn(5, 5)
    rank_two = torch.randn(5, 2) @ torch.randn(2, 5)
    inputs = (a, wide, rank_two + rank_two.t(), torch.triu(m + m.t()) + torch.tril(torch.randn(5, 5), -1))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(spectral), list(inputs), output_type="linalg-on-tensors"))
    (got, vectors), (expected, expected_vectors) = run(*inputs), spectral(*inputs)
    assert_close(got, expected)
    assert_close(tuple(torch.abs(x) for x in vectors), tuple(torch.abs(x) for x in expected_vectors))
    u, v, wide_u, wide_vh, eigenvectors = vectors
    symmetric = torch.triu(inputs[3]) + torch.triu(inputs[3], 1).t()
    assert_close((u @ torch.diag(got[-2]) @ v.t(), wide_u @ torch.diag(got[-1]) @ wide_vh,
                  eigenvectors @ torch.diag(got[-3]) @ eigenvectors.t()), (a, wide, symmetric))


def pinv_of_empty(tall: torch.Tensor, batch: torch.Tensor, rcond: torch.Tensor):
    return torch.linalg.pinv(tall, rcond), torch.linalg.pinv(batch, atol=rcond[0], rtol=rcond[1], hermitian=True)


def test_pinv_of_an_empty_matrix_ignores_the_tolerances_on_iree():
    """An empty matrix's pseudo-inverse is its empty transpose, as eager's: the tolerances' own batch shape
    (op_db's `rcond` of shape [3, 0]) does not broadcast into it."""
    inputs = (torch.randn(3, 0), torch.randn(0, 2, 2), torch.rand(3, 0))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(pinv_of_empty), list(inputs), output_type="linalg-on-tensors"))
    assert_close(run(*inputs), pinv_of_empty(*inputs))


def condition_numbers(a: torch.Tensor, batch: torch.Tensor, singular: torch.Tensor, double: torch.Tensor):
    cond = torch.linalg.cond
    return (cond(a), cond(a, -2), cond(a, 1), cond(batch, float("inf")), cond(batch, -1), cond(batch, float("-inf")),
            cond(a, "fro"), cond(singular, 1), cond(singular, "fro"), cond(double), cond(batch, 2))


def test_condition_numbers_on_iree():
    """In the 2-norm by the Jacobi singular values (p None, 2, -2), in the others as norm(A) norm(A^-1), batched;
    a singular matrix's are infinite."""
    torch.manual_seed(0)
    inputs = (torch.randn(5, 5), torch.randn(2, 3, 3), torch.tensor([[1.0, 2.0], [2.0, 4.0]]),
              torch.randn(4, 4, dtype=torch.float64))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(condition_numbers), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), condition_numbers(*inputs))
