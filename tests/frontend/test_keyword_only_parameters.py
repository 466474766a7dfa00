"""Keyword-only parameters with defaults (`def f(x, *, scale: float = 1.0)`): tsjit's documented extension.

torch.jit refuses them ("Compiled functions can't take variable number of arguments or use keyword-only arguments
with defaults"); tsjit compiles them into the schema's kwarg_only arguments, so calls pass them by keyword only
(from Python and from TorchScript), the default fills in a value left out, `.code` prints the `*`, and an archive
keeps it (TorchScript's parser reads `*`, so torch.jit.load takes the archive too). `*args` stays rejected.
"""

from __future__ import annotations

import io

import pytest
import torch

import tsjit
from tsjit.errors import CompileError, TsjitError


def shifted(x: torch.Tensor, y: int = 2, *, scale: float = 3.0, shift: int = 1) -> torch.Tensor:
    return x * scale + y + shift


def calls_shifted(x: torch.Tensor) -> torch.Tensor:
    return shifted(x, shift=4) + shifted(x, 5, scale=0.5)


def calls_shifted_positionally(x: torch.Tensor) -> torch.Tensor:
    return shifted(x, 1, 2.0)


class Scaled(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: int = 2, *, scale: float = 3.0) -> torch.Tensor:
        return x * scale + y

    @torch.jit.export
    def by_keyword(self, x: torch.Tensor, k: int) -> torch.Tensor:
        return self.forward(x, scale=float(k))


CALLS = [((), {}), ((5,), {}), ((), {"scale": 2.0}), ((7,), {"shift": 0, "scale": -1.0})]


@pytest.mark.parametrize("args, kwargs", CALLS)
def test_calls_by_keyword_match_python(args, kwargs):
    x = torch.randn(3)
    assert torch.equal(tsjit.script(shifted)(x, *args, **kwargs), shifted(x, *args, **kwargs))


def test_schema_marks_them_keyword_only():
    schema = tsjit.script(shifted).schema
    assert [(a.name, a.kwarg_only, a.default_value) for a in schema.arguments[1:]] == [
        ("y", False, 2), ("scale", True, 3.0), ("shift", True, 1)]
    assert str(schema) == "shifted(Tensor x, int y=2, *, float scale=3., int shift=1) -> Tensor"


def test_passing_them_positionally_is_an_error():
    with pytest.raises(TsjitError, match=r"takes 2 positional argument\(s\) but 3 was/were given"):
        tsjit.script(shifted)(torch.ones(2), 1, 2.0)


def test_script_callers_pass_them_by_keyword():
    x = torch.randn(4)
    assert torch.equal(tsjit.script(calls_shifted)(x), calls_shifted(x))
    with pytest.raises(CompileError):
        tsjit.script(calls_shifted_positionally)


def test_code_prints_the_star_and_callers_print_keywords():
    assert tsjit.script(shifted).code == (
        "def shifted(x: Tensor,\n    y: int=2,\n    *,\n    scale: float=3.,\n    shift: int=1) -> Tensor:\n"
        "  _0 = torch.add(torch.add(torch.mul(x, scale), y), shift)\n  return _0\n")
    assert "(self).forward(x, 2, scale=float(k), )" in tsjit.script(Scaled()).by_keyword.code


def test_keyword_only_without_defaults_prints_as_torch_jit():
    def f(x: torch.Tensor, *, k: int) -> torch.Tensor:
        return x + k

    assert tsjit.script(f).code == torch.jit.script(f).code


@pytest.mark.parametrize("load", [torch.jit.load, tsjit.load], ids=["torch.jit.load", "tsjit.load"])
def test_archives_keep_them_keyword_only(load):
    buffer = io.BytesIO()
    tsjit.script(Scaled()).save(buffer)
    buffer.seek(0)
    loaded, eager, x = load(buffer), Scaled(), torch.randn(3)
    assert torch.equal(loaded(x), eager(x)) and torch.equal(loaded(x, 1, scale=0.5), eager(x, 1, scale=0.5))
    assert torch.equal(loaded.by_keyword(x, 4), eager.by_keyword(x, 4))
    with pytest.raises((RuntimeError, TsjitError), match="positional argument"):
        loaded(x, 1, 0.5)


def test_variadic_parameters_stay_rejected():
    def f(x: torch.Tensor, *rest: int) -> torch.Tensor:
        return x

    with pytest.raises(CompileError, match="variable number of arguments"):
        tsjit.script(f)
