"""torch.fft's transforms of real (and complex) tensors in TorchScript, as matrix products with cosine and sine
tables, for decompositions.DECOMPOSITIONS.

The torch dialect has no `aten::fft_fft2`, `aten::fft_irfft`, `aten::fft_hfftn`...; torch-mlir lowers
`aten::fft_rfft` only to tm_tensor's FFT of power-of-two lengths, and `aten::fft_fft` not at all (its decomposition
leaves a `torch.constant.int`). Here each transform is a discrete Fourier transform written out: along one
dimension of transform length n, output k of input x is sum_j x_j e^(sign 2 pi i j k / n), the real and imaginary
parts carried as two real tensors and multiplied by an (inputs x outputs) table of cosines and sines. The table
also trims and zero-pads the input to n (rows past n are zero, missing rows add nothing), and its angles are
2 pi (j k mod n) / n, reduced exactly in integers. A transform over several dimensions applies one dimension after
the other; the complex result is `torch.complex(real, imaginary)`, which linalg and IREE return as complex<f32>.

Three kinds along one dimension (sign -1 for the forward transforms fft, rfft, hfft; +1 for the inverse ones):
- `_real_dft`: real input, complex output (fft, rfft's n // 2 + 1 outputs, ihfft);
- `_complex_dft`: complex input, complex output (the other dimensions of fft2, fftn, rfftn, irfftn, hfftn...);
- `_hermitian_dft`: the one-sided half of a Hermitian signal (n // 2 + 1 values) to its real transform (irfft,
  hfft): the other half is the conjugate of the first, so the sum over n is the first and last terms plus twice
  the real part of the terms between, and the imaginary parts of the first and (n even) last terms are ignored,
  as pocketfft ignores them.
Normalization (`norm`) scales each dimension by 1, 1 / sqrt(n) or 1 / n as torch.fft documents. Only inputs whose
sizes the types state are decomposed (decompositions._ONLY_WHEN: the tables' sizes must be constants), of floating
dtypes, or complex ones for the transforms that take them (OF_COMPLEX_INPUTS: fft, ifft, their n-dimensional
forms, and the Hermitian irfft, hfft), whose parts (`torch.real`, `torch.imag`) are transformed by `_complex_dft`
along every dimension: torch-mlir's own `aten::fft_fft` of a complex tensor stops linalg (a `torch.constant.int`
left in torch-finalizing-backend-type-conversion).
"""

from __future__ import annotations

FOURIER = """
def _fft_scale(x: Tensor, n: int, norm: Optional[str], forward: bool) -> Tensor:
  # "backward" (the default) leaves the forward transform unscaled and divides the inverse by n; "forward" the
  # other way round; "ortho" divides both by sqrt(n). (A 0-d tensor of x's dtype: torch-mlir lowers no float pow.)
  length = torch.full([], n, dtype=x.dtype)
  mode = "backward" if norm is None else norm
  if mode == "ortho":
    return torch.rsqrt(length)
  if (mode == "forward") == forward:
    return torch.reciprocal(length)
  return torch.ones_like(length)
def _fft_sign(forward: bool) -> float:
  return -1.0 if forward else 1.0
def _fft_table(x: Tensor, inputs: int, outputs: int, n: int, used: int) -> Tuple[Tensor, Tensor]:
  # cos and sin of 2 pi (j k mod n) / n for input j < used (the other rows zero) and output k, in x's dtype
  j = torch.arange(inputs).unsqueeze(-1)
  angles = torch.remainder(j * torch.arange(outputs), n).to(x.dtype) * (6.283185307179586 / n)
  kept = (j < used).to(x.dtype)
  return torch.cos(angles) * kept, torch.sin(angles) * kept
def _real_dft(x: Tensor, dim: int, n: int, outputs: int, forward: bool, norm: Optional[str]) -> Tuple[Tensor, Tensor]:
  # (real, imaginary) of the first `outputs` terms of the transform of length n of real x along dim
  cos, sin = _fft_table(x, x.size(dim), outputs, n, n)
  scale = _fft_scale(x, n, norm, forward)
  a = x.transpose(dim, -1)
  return (torch.matmul(a, cos * scale).transpose(dim, -1),
          torch.matmul(a, sin * (_fft_sign(forward) * scale)).transpose(dim, -1))
def _complex_dft(re: Tensor, im: Tensor, dim: int, n: int, forward: bool,
                 norm: Optional[str]) -> Tuple[Tensor, Tensor]:
  # (a + ib)(cos + i sign sin) = a cos - b sign sin + i (a sign sin + b cos)
  cos, sin = _fft_table(re, re.size(dim), n, n, n)
  scale = _fft_scale(re, n, norm, forward)
  cos = cos * scale
  sin = sin * (_fft_sign(forward) * scale)
  a = re.transpose(dim, -1)
  b = im.transpose(dim, -1)
  return ((torch.matmul(a, cos) - torch.matmul(b, sin)).transpose(dim, -1),
          (torch.matmul(a, sin) + torch.matmul(b, cos)).transpose(dim, -1))
def _hermitian_dft(re: Tensor, im: Tensor, dim: int, n: int, forward: bool, norm: Optional[str]) -> Tensor:
  # the real transform of length n of the Hermitian signal whose first n // 2 + 1 terms are re + i im along dim:
  # terms 0 and n / 2 once (their imaginary parts ignored), the terms between twice (they and their conjugates)
  cos, sin = _fft_table(re, re.size(dim), n, n, n // 2 + 1)
  k = torch.arange(re.size(dim)).unsqueeze(-1)
  between = torch.logical_and(k > 0, 2 * k < n).to(re.dtype)
  ends = torch.logical_or(k == 0, 2 * k == n).to(re.dtype)
  scale = _fft_scale(re, n, norm, forward)
  a = re.transpose(dim, -1)
  b = im.transpose(dim, -1)
  return (torch.matmul(a, cos * ((2 * between + ends) * scale)) -
          torch.matmul(b, sin * (2 * between * (_fft_sign(forward) * scale)))).transpose(dim, -1)
def _fft_dims(x: Tensor, s: Optional[List[int]], dim: Optional[List[int]]) -> List[int]:
  # the transformed dimensions: dim, else the last len(s), else all
  if dim is not None:
    return [d % x.dim() for d in dim]
  if s is not None:
    return [x.dim() - len(s) + i for i in range(len(s))]
  return [i for i in range(x.dim())]
def _fft_lengths(x: Tensor, s: Optional[List[int]], dims: List[int], hermitian_last: bool) -> List[int]:
  # the transform lengths: s's (-1: the input's), else the input's; a Hermitian input's last one 2 (m - 1)
  lengths = [x.size(d) for d in dims]
  if hermitian_last:
    lengths[-1] = 2 * (lengths[-1] - 1)
  if s is not None:
    for i in range(len(s)):
      if s[i] != -1:
        lengths[i] = s[i]
  return lengths
def _fft_real_to_complex(x: Tensor, dims: List[int], lengths: List[int], forward: bool, norm: Optional[str],
                         onesided: bool) -> Tensor:
  # the transform of real x over dims: the last dimension first (one-sided: n // 2 + 1 outputs), then the others;
  # of complex x, of its parts over every dimension
  if x.is_complex():
    re = torch.real(x)
    im = torch.imag(x)
    for i in range(len(dims)):
      re, im = _complex_dft(re, im, dims[i], lengths[i], forward, norm)
    return torch.complex(re, im)
  last = len(dims) - 1
  outputs = lengths[last] // 2 + 1 if onesided else lengths[last]
  re, im = _real_dft(x, dims[last], lengths[last], outputs, forward, norm)
  for i in range(last):
    re, im = _complex_dft(re, im, dims[i], lengths[i], forward, norm)
  return torch.complex(re, im)
def _fft_hermitian_to_real(x: Tensor, dims: List[int], lengths: List[int], forward: bool,
                           norm: Optional[str]) -> Tensor:
  # the real transform of x (real, or complex: re + i im), one-sided along the last of dims: the other dimensions
  # first, then the last
  re = torch.real(x) if x.is_complex() else x
  im = torch.imag(x) if x.is_complex() else torch.zeros_like(x)
  for i in range(len(dims) - 1):
    re, im = _complex_dft(re, im, dims[i], lengths[i], forward, norm)
  return _hermitian_dft(re, im, dims[-1], lengths[-1], forward, norm)
def _fft_length(x: Tensor, dim: int, n: Optional[int], hermitian: bool) -> int:
  # the transform length: n, else the input's (of a Hermitian input's one-sided half, 2 (m - 1))
  if n is not None:
    return n
  return 2 * (x.size(dim) - 1) if hermitian else x.size(dim)
def _fft(x: Tensor, n: Optional[int], dim: int, norm: Optional[str], forward: bool, onesided: bool) -> Tensor:
  length = _fft_length(x, dim, n, False)
  if x.is_complex():
    re, im = _complex_dft(torch.real(x), torch.imag(x), dim, length, forward, norm)
    return torch.complex(re, im)
  re, im = _real_dft(x, dim, length, length // 2 + 1 if onesided else length, forward, norm)
  return torch.complex(re, im)
def _hermitian_fft(x: Tensor, n: Optional[int], dim: int, norm: Optional[str], forward: bool) -> Tensor:
  length = _fft_length(x, dim, n, True)
  if x.is_complex():
    return _hermitian_dft(torch.real(x), torch.imag(x), dim, length, forward, norm)
  return _hermitian_dft(x, torch.zeros_like(x), dim, length, forward, norm)
def fft_fft(self: Tensor, n: Optional[int] = None, dim: int = -1, norm: Optional[str] = None) -> Tensor:
  return _fft(self, n, dim, norm, True, False)
def fft_ifft(self: Tensor, n: Optional[int] = None, dim: int = -1, norm: Optional[str] = None) -> Tensor:
  return _fft(self, n, dim, norm, False, False)
def fft_rfft(self: Tensor, n: Optional[int] = None, dim: int = -1, norm: Optional[str] = None) -> Tensor:
  return _fft(self, n, dim, norm, True, True)
def fft_ihfft(self: Tensor, n: Optional[int] = None, dim: int = -1, norm: Optional[str] = None) -> Tensor:
  return _fft(self, n, dim, norm, False, True)
def fft_irfft(self: Tensor, n: Optional[int] = None, dim: int = -1, norm: Optional[str] = None) -> Tensor:
  return _hermitian_fft(self, n, dim, norm, False)
def fft_hfft(self: Tensor, n: Optional[int] = None, dim: int = -1, norm: Optional[str] = None) -> Tensor:
  return _hermitian_fft(self, n, dim, norm, True)
def _fftn(x: Tensor, s: Optional[List[int]], dim: Optional[List[int]], norm: Optional[str], forward: bool,
          onesided: bool) -> Tensor:
  dims = _fft_dims(x, s, dim)
  return _fft_real_to_complex(x, dims, _fft_lengths(x, s, dims, False), forward, norm, onesided)
def _hermitian_fftn(x: Tensor, s: Optional[List[int]], dim: Optional[List[int]], norm: Optional[str],
                    forward: bool) -> Tensor:
  dims = _fft_dims(x, s, dim)
  return _fft_hermitian_to_real(x, dims, _fft_lengths(x, s, dims, True), forward, norm)
def fft_fft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
             norm: Optional[str] = None) -> Tensor:
  return _fftn(self, s, dim, norm, True, False)
def fft_ifft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
              norm: Optional[str] = None) -> Tensor:
  return _fftn(self, s, dim, norm, False, False)
def fft_rfft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
              norm: Optional[str] = None) -> Tensor:
  return _fftn(self, s, dim, norm, True, True)
def fft_ihfft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
               norm: Optional[str] = None) -> Tensor:
  return _fftn(self, s, dim, norm, False, True)
def fft_irfft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
               norm: Optional[str] = None) -> Tensor:
  return _hermitian_fftn(self, s, dim, norm, False)
def fft_hfft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
              norm: Optional[str] = None) -> Tensor:
  return _hermitian_fftn(self, s, dim, norm, True)
def fft_fftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
             norm: Optional[str] = None) -> Tensor:
  return _fftn(self, s, dim, norm, True, False)
def fft_ifftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
              norm: Optional[str] = None) -> Tensor:
  return _fftn(self, s, dim, norm, False, False)
def fft_rfftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
              norm: Optional[str] = None) -> Tensor:
  return _fftn(self, s, dim, norm, True, True)
def fft_ihfftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
               norm: Optional[str] = None) -> Tensor:
  return _fftn(self, s, dim, norm, False, True)
def fft_irfftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
               norm: Optional[str] = None) -> Tensor:
  return _hermitian_fftn(self, s, dim, norm, False)
def fft_hfftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
              norm: Optional[str] = None) -> Tensor:
  return _hermitian_fftn(self, s, dim, norm, True)
"""

# the transforms (of real inputs, argument 0; decompositions' _ONLY_WHEN), and those that take complex ones too
TRANSFORMS = tuple(f"fft_{kind}{rank}" for kind in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
                   for rank in ("", "2", "n"))
OF_COMPLEX_INPUTS = tuple(name for name in TRANSFORMS if not name.startswith(("fft_rfft", "fft_ihfft")))
