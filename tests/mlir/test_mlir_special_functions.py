"""torch.special's polynomials and Bessel functions (not in the torch dialect), decomposed by tsjit
(tsjit/mlir/special_functions.py), lowered to linalg and run on IREE against eager: one program per family, so
that IREE compiles once."""

from __future__ import annotations

import torch
from mlir_corpus import assert_close

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


def polynomials(x: torch.Tensor, n: torch.Tensor, shifted: torch.Tensor):
    s = torch.special
    return (s.chebyshev_polynomial_t(x, n), s.chebyshev_polynomial_u(x, n), s.chebyshev_polynomial_v(x, n),
            s.chebyshev_polynomial_w(x, n), s.shifted_chebyshev_polynomial_t(shifted, n),
            s.shifted_chebyshev_polynomial_u(shifted, n), s.shifted_chebyshev_polynomial_v(shifted, n),
            s.shifted_chebyshev_polynomial_w(shifted, n), s.hermite_polynomial_h(x, n),
            s.hermite_polynomial_he(x, n), s.laguerre_polynomial_l(x, n), s.legendre_polynomial_p(x, n))


def test_polynomials_of_tensor_degrees_on_iree():
    """Degrees known only at run time (a loop to the largest one), fractional and negative degrees, the ends of
    [-1, 1] and the closed forms ATen takes for large degrees inside it; one degree-0-d program as op_db's."""
    x = torch.tensor([0.3, -0.5, 0.9, 1.0, -1.0, 2.0, 0.0, -1.5, 0.05, 0.7])
    n = torch.tensor([4.5, 2.0, 7.0, 3.0, 5.0, 3.9, 0.0, -1.7, 12.0, 10.0])
    inputs = (x, n, (x + 1) / 2)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(polynomials), list(inputs), output_type="linalg-on-tensors"))
    assert_close(run(*inputs), polynomials(*inputs))


def bessel_functions(x: torch.Tensor, p: torch.Tensor, exponents: torch.Tensor, offsets: torch.Tensor):
    s = torch.special
    return (s.i0e(x), s.i1e(x), torch.i0(x), s.modified_bessel_i0(x), s.i1(x), s.modified_bessel_i1(x),
            s.modified_bessel_k0(x), s.scaled_modified_bessel_k0(x), s.modified_bessel_k1(x),
            s.scaled_modified_bessel_k1(x), s.bessel_j0(x), s.bessel_j1(x), s.bessel_y0(x), s.bessel_y1(x),
            s.ndtri(p), s.spherical_bessel_j0(x), s.zeta(exponents, offsets), s.erfcx(x), s.log_ndtr(x))


def test_bessel_functions_ndtri_and_zeta_on_iree():
    """Both intervals of each Cephes expansion (around 2, 5 and 8), 0 and negative arguments (infinite or NaN for
    K and Y), infinity, ndtri's middle, both tails, the far tail and outside [0, 1]; the Hurwitz zeta function at
    its poles, outside its domain and of a negative offset (more terms summed, signs of odd powers); erfcx and
    log_ndtr on both sides of 1.5, where erfcx's continued fraction takes over."""
    x = torch.tensor([0.0, 1e-6, 0.3, -0.5, 1.9, 2.1, 4.9, 5.1, -7.0, 8.5, 12.0, -20.0, 30.0, float("inf")])
    p = torch.tensor([0.0, 1e-20, 1e-10, 0.01, 0.1, 0.2, 0.5, 0.8, 0.9, 0.999, 1.0, 1.5, -0.1, 1 - 1e-7])
    exponents = torch.tensor([2.0, 3.5, 1.0, 0.5, 1.5, 10.0, 2.0, 4.0, 1.01, 30.0, 3.0])
    offsets = torch.tensor([1.0, 0.5, 2.0, 1.0, 3.0, 0.2, -2.0, -1.5, 100.0, 1.0, -12.5])
    inputs = (x, p, exponents, offsets)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(bessel_functions), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), bessel_functions(*inputs))


def digamma(x: torch.Tensor, half: torch.Tensor):
    return torch.digamma(x), torch.special.digamma(x), torch.special.psi(x), torch.digamma(half)


def test_digamma_on_iree():
    """Both signs of 0 (-inf, inf), negative integers (NaN), near the poles (the reflection's tangent of the
    distance to the nearest integer), 10 itself and the asymptotic series above it, infinities and NaN; float16
    computed in float32, as ATen computes it."""
    x = torch.tensor([0.0, -0.0, 1e-6, 0.3, 1.0, 2.0, 9.0, 10.0, 9.5, 10.5, 30.0, 1e20, float("inf"), float("-inf"),
                      float("nan"), -1.0, -2.0, -0.5, -2.9999, -3.0001, -7.3, -1e-6, -123.25, 0.999, 5.5])
    inputs = (x, torch.linspace(-9, 9, 37, dtype=torch.float16))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(digamma), list(inputs), output_type="linalg-on-tensors"))
    assert_close(run(*inputs), digamma(*inputs))


def airy(x: torch.Tensor):
    return torch.special.airy_ai(x)


def test_airy_ai_on_iree():
    """Each of Cephes' three forms and their boundaries (-2.09, 2.09, where ATen stops the series above 8.32), the
    oscillations far below 0 (to 3e-6 of eager, whose own float32 error there is 1.2e-6), underflow to 0 and the
    cut-off at 103.892, NaN at the infinities."""
    x = torch.cat([torch.linspace(-15.0, 15.0, 301), torch.tensor([-2.09, 2.09, 2.0899999, 8.32, 8.33, 30.0, 103.0,
                                                                    110.0, float("inf"), float("-inf"), float("nan")])])
    run = iree.compile(tsjit.mlir.compile(tsjit.script(airy), [x], output_type="linalg-on-tensors"))
    assert_close(run(x), airy(x))
