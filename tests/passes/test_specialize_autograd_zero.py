"""specialize_autograd_zero: the executor's spec decides which tensors are undefined, and checks on them fold."""

from __future__ import annotations

import torch
from pass_case import check_pass

import tsjit
from tsjit.ir.parser import parse_ir
from tsjit.passes.specialize_autograd_zero import specialize_autograd_zero
from tsjit.runtime.graph_executor import GraphExecutor

ACCUMULATE = """
graph(%a : Tensor, %b : Tensor):
  %c : Tensor = prim::AutogradAdd(%a, %b)
  %any : bool = prim::AutogradAnyNonZero(%a, %b)
  %r : (Tensor, bool) = prim::TupleConstruct(%c, %any)
  return (%r)
"""


def kinds(graph) -> list[str]:
    return [str(node.kind) for node in graph.all_nodes()]


def spec_typed(a: str, b: str) -> str:
    """ACCUMULATE with the input types the executor's argument spec gives (as specialize_types prints them)."""
    return ACCUMULATE.replace("%a : Tensor,", f"%a : {a},").replace("%b : Tensor)", f"%b : {b})")


UNDEFINED, DEFINED = "Tensor[Undefined]", "Float(*, requires_grad=0, device=cpu)"


def test_adding_an_undefined_gradient_is_the_other_gradient() -> None:
    t = torch.ones(2)
    check_pass(specialize_autograd_zero, spec_typed(UNDEFINED, DEFINED), inputs=[(None, t)],
               absent=["prim::AutogradAdd", "prim::AutogradAnyNonZero"])
    assert GraphExecutor(parse_ir(ACCUMULATE)).run([None, t]) == (t, True)


def test_two_defined_gradients_become_an_ordinary_add() -> None:
    check_pass(specialize_autograd_zero, spec_typed(DEFINED, DEFINED), inputs=[(torch.ones(2), torch.ones(2))],
               present=["aten::add"], absent=["prim::AutogradAdd"])
    result, any_defined = GraphExecutor(parse_ir(ACCUMULATE)).run([torch.ones(2), torch.ones(2)])
    assert torch.equal(result, torch.full((2,), 2.0)) and any_defined


def test_both_undefined_and_unspecialized_graphs_keep_what_they_cannot_decide() -> None:
    assert GraphExecutor(parse_ir(ACCUMULATE)).run([None, None]) == (None, False)
    check_pass(specialize_autograd_zero, spec_typed("Tensor?", "Tensor?"), changed=False,
               inputs=[(None, None), (None, torch.ones(2)), (torch.ones(2), torch.ones(2))])


def test_an_optional_input_given_none_folds_its_checks(monkeypatch) -> None:
    # not check_pass: this is the executor's specialization of a scripted function end to end, not one pass on text
    monkeypatch.setenv("TSJIT_FUSION", "0")  # the plans' node kinds are the point here, unfused
    def f(x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if mask is not None:
            x = x * mask
        return x + 1

    scripted = tsjit.script(f)
    x = torch.randn(3)
    assert kinds(scripted.graph_for(x, None)) == ["prim::Constant", "aten::add"]  # no check, branch, multiplication
    assert kinds(scripted.graph_for(x, x)) == ["prim::Constant", "aten::mul", "aten::add"]  # a defined tensor
    torch.testing.assert_close(scripted(x, None), f(x, None))
    torch.testing.assert_close(scripted(x, x), f(x, x))


def test_in_the_pass_test_shape():
    """With %b known undefined (the spec's `Tensor[Undefined]`... here `NoneType`), AutogradAdd is %a."""
    check_pass(specialize_autograd_zero, """
graph(%a : Tensor, %b : NoneType):
  %c : Tensor = prim::AutogradAdd(%a, %b)
  %any : bool = prim::AutogradAnyNonZero(%a, %b)
  %r : (Tensor, bool) = prim::TupleConstruct(%c, %any)
  return (%r)""", present=["prim::TupleConstruct(%a, %"], absent=["prim::AutogradAdd", "prim::AutogradAnyNonZero"],
               run=False)
