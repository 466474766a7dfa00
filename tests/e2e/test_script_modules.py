"""Every module of the e2e module corpus, scripted by tsjit: it runs and matches eager PyTorch (outputs, and the
state the call changes), and its inlined forward graph has the same multiset of node kinds as torch.jit's, or
the difference recorded in the corpus."""

from __future__ import annotations

import pytest
import torch
from module_corpus import MODULE_CASES, ModuleCase
from test_script_functions import kinds_difference, same

from tsjit.api.module import script_module


def parametrize_cases(check: str):
    """Parametrize a test over the corpus; a case's known gap for this check makes it a strict xfail."""
    def marks(case: ModuleCase) -> list:
        reason = case.xfail.get(check)
        return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []

    cases = [pytest.param(c, id=c.name, marks=marks(c)) for c in MODULE_CASES]
    return pytest.mark.parametrize("case", cases)


def run(module, case: ModuleCase):
    torch.manual_seed(1)
    inputs = case.make_inputs()
    torch.manual_seed(2)
    return module(*inputs)


@parametrize_cases("run")
def test_runs_and_matches_eager(case: ModuleCase):
    eager, scripted = case.build(), script_module(case.build())
    expected, actual = run(eager, case), run(scripted, case)
    assert same(expected, actual), f"eager {expected!r} != tsjit {actual!r}"
    for name in case.state:
        assert same(getattr(eager, name), getattr(scripted, name)), name


@parametrize_cases("kinds")
def test_node_kinds_match_torch_jit(case: ModuleCase):
    theirs = torch.jit.script(case.build()).inlined_graph
    difference = kinds_difference(theirs, script_module(case.build()).inlined_graph)
    assert difference == case.kinds_difference, case.why


@parametrize_cases("state_dict")
def test_state_dict_matches_eager(case: ModuleCase):
    eager, scripted = case.build(), script_module(case.build())
    expected, actual = eager.state_dict(), scripted.state_dict()
    assert list(expected) == list(actual)
    assert all(torch.equal(expected[k], actual[k]) for k in expected)


def test_corpus_covers_the_nn_modules_of_the_brief():
    names = " ".join(c.name for c in MODULE_CASES)
    for module in ("linear", "conv2d", "batchnorm2d", "layernorm", "dropout_eval", "dropout_train", "embedding",
                   "lstm", "gru", "multihead_attention", "transformer_encoder_layer", "sequential"):
        assert module in names
