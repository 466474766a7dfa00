"""Random sampling the torch dialect has no form for, in TorchScript over the random operators it lowers
(`aten::rand_like`, `aten::randn`, `aten::randint`), for decompositions.DECOMPOSITIONS.

A random result cannot equal eager's draw: what a decomposition keeps is the distribution, dtype and shape.
- `normal` (its four overloads): mean + std * standard normal samples;
- `randint_like`: `randint` of the input's sizes, in its dtype unless one is given;
- `multinomial` with replacement: each sample the first category whose cumulative probability exceeds a uniform
  number (inverse transform sampling); without replacement: the categories of the num_samples largest
  log p + Gumbel noise (the Gumbel-top-k trick: a draw of distinct categories, each step in proportion to the
  remaining probabilities, as ATen draws them).
An explicit generator is not decomposed (decompositions._ONLY_WHEN): the backends draw from their own seed.
"""

from __future__ import annotations

SAMPLING = """
def normal__float_float(mean: float, std: float, size: List[int], generator: Optional[Generator] = None,
                        dtype: Optional[int] = None, layout: Optional[int] = None, device: Optional[Device] = None,
                        pin_memory: Optional[bool] = None) -> Tensor:
  return torch.randn(size, dtype=dtype) * std + mean
def normal__Tensor_Tensor(mean: Tensor, std: Tensor, generator: Optional[Generator] = None) -> Tensor:
  return torch.randn_like(mean + std) * std + mean  # (of the broadcast shape)
def normal__Tensor_float(mean: Tensor, std: float = 1.0, generator: Optional[Generator] = None) -> Tensor:
  return torch.randn_like(mean) * std + mean
def normal__float_Tensor(mean: float, std: Tensor, generator: Optional[Generator] = None) -> Tensor:
  return torch.randn_like(std) * std + mean
def randint_like(self: Tensor, high: int, dtype: Optional[int] = None, layout: Optional[int] = None,
                 device: Optional[Device] = None, pin_memory: Optional[bool] = None,
                 memory_format: Optional[int] = None) -> Tensor:
  return torch.randint(0, high, self.size(), dtype=self.dtype if dtype is None else dtype)
def randint_like__low_dtype(self: Tensor, low: int, high: int, dtype: Optional[int] = None,
                            layout: Optional[int] = None, device: Optional[Device] = None,
                            pin_memory: Optional[bool] = None, memory_format: Optional[int] = None) -> Tensor:
  return torch.randint(low, high, self.size(), dtype=self.dtype if dtype is None else dtype)
def multinomial(self: Tensor, num_samples: int, replacement: bool = False,
                generator: Optional[Generator] = None) -> Tensor:
  if replacement:
    cumulative = torch.cumsum(self, -1)
    cumulative = cumulative / cumulative.narrow(-1, self.size(-1) - 1, 1)
    uniform = torch.rand(self.size()[:-1] + [num_samples], dtype=self.dtype)
    below = (cumulative.unsqueeze(-2) <= uniform.unsqueeze(-1)).sum([-1])
    return torch.clamp(below, None, self.size(-1) - 1)
  gumbel = -torch.log(-torch.log(torch.rand_like(self)))
  return torch.topk(torch.log(self) + gumbel, num_samples, -1)[1]
"""

# operator -> the position of its generator argument, which must be None (decompositions' _ONLY_WHEN)
GENERATOR_ARGUMENT = {"normal__float_float": 3, "normal__Tensor_Tensor": 2, "normal__Tensor_float": 2,
                      "normal__float_Tensor": 2, "multinomial": 3}
