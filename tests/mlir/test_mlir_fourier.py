"""torch.fft's transforms of real and complex tensors (not in the torch dialect), decomposed by tsjit
(tsjit/mlir/fourier.py) into products with cosine and sine tables, lowered to linalg and run on IREE against
eager: one program, so that IREE compiles once; and the TorchScript definitions themselves against eager on every
norm, trims and pads."""

from __future__ import annotations

import itertools
from typing import Optional

import torch
from mlir_corpus import assert_close

import tsjit
import tsjit.mlir
from tsjit.mlir import fourier, iree


def transforms(x: torch.Tensor, v: torch.Tensor):
    return (torch.fft.fft(x, n=10, dim=1, norm="ortho"), torch.fft.irfft(v, n=7, norm="forward"),
            torch.fft.hfft2(x), torch.fft.rfftn(x, s=(3, 4)), torch.fft.ifftn(x, dim=(0, 2)))


def test_fourier_transforms_on_iree():
    """Complex results (complex<f32> from linalg) and real ones, inputs trimmed and zero-padded to the lengths."""
    torch.manual_seed(0)
    x, v = torch.randn(4, 6, 7), torch.randn(6)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(transforms), [x, v], output_type="linalg-on-tensors"))
    assert_close(run(x, v), transforms(x, v))


def complex_transforms(x: torch.Tensor, y: torch.Tensor):
    return (torch.fft.fft(x), torch.fft.ifft(x, n=6, norm="ortho"), torch.fft.fftn(y), torch.fft.ifft2(y, s=[3, 4]),
            torch.fft.irfft(x), torch.fft.hfft(x, n=7), torch.fft.irfftn(y))


def test_transforms_of_complex_inputs_on_iree():
    """Complex inputs (complex<f32> arguments, their parts transformed): complex and real (Hermitian) results."""
    torch.manual_seed(0)
    x, y = torch.randn(8, dtype=torch.complex64), torch.randn(3, 5, dtype=torch.complex64)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(complex_transforms), [x, y],
                                          output_type="linalg-on-tensors"))
    assert_close(run(x, y), complex_transforms(x, y))


def _definitions() -> dict:
    """fourier.FOURIER run as Python (TorchScript's source is Python), by name."""
    names = {"torch": torch, "Tensor": torch.Tensor, "Optional": Optional, "List": list, "Tuple": tuple}
    exec(fourier.FOURIER, names)
    return names


def test_definitions_agree_with_eager():
    """Each transform with lengths trimmed, padded and defaulted, dimensions in any order, the norms in turn; of
    real inputs, and of complex ones where it takes them."""
    definitions, real = _definitions(), torch.randn(5, 6, 7, dtype=torch.float64)
    one = [{}, {"n": 10, "dim": 1}, {"n": 3, "dim": 0}, {"n": 4, "dim": -1}]
    several = [{}, {"s": [3, 10], "dim": [1, 2]}, {"s": [4, 5]}, {"dim": [0, 2]}, {"s": [-1, 9], "dim": [2, 0]}]
    norms = itertools.cycle([None, "ortho", "forward", "backward", "ortho"])
    inputs = [(name, real) for name in fourier.TRANSFORMS] + [
        (name, torch.randn(5, 6, 7, dtype=torch.complex128)) for name in fourier.OF_COMPLEX_INPUTS]
    for name, x in inputs:
        for arguments in one if name[-1] not in "2n" else several + [{"s": [3, 4, 5]}] * name.endswith("n"):
            norm = next(norms)
            expected = getattr(torch.fft, name[4:])(x, norm=norm, **arguments)
            got = definitions[name](x, norm=norm, **arguments)
            assert (got.dtype, got.shape) == (expected.dtype, expected.shape), (name, norm, arguments)
            torch.testing.assert_close(got, expected, atol=1e-10, rtol=1e-10, msg=f"{name} {norm} {arguments}")
