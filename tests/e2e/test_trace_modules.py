"""Every nn.Module of the e2e corpus that torch.jit can trace, traced by tsjit: it matches eager PyTorch on
fresh inputs and on inputs of other sizes wherever torch.jit's trace does; and the models of the tracer's
issue (an MLP, a small CNN, nn.LSTM, nn.GRU, TransformerEncoderLayer) have the node kinds torch.jit's traces
have, after inlining, up to the differences recorded here."""

from __future__ import annotations

import warnings

import pytest
import torch
from module_corpus import MODULE_CASES, ModuleCase
from test_script_functions import kinds_difference
from torch import nn
from trace_oracle import OUT_OF_REACH, STRATEGIES, other_inputs, outcome, resized, same

from tsjit.api.trace import trace

jit = pytest.importorskip("torch.jit")


def quietly(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def torch_trace(module: nn.Module, inputs: tuple):
    try:
        return quietly(jit.trace, module, inputs, check_trace=False)
    except Exception:
        return None


def inputs_of(case: ModuleCase, seed: int) -> tuple:
    torch.manual_seed(seed)
    return case.make_inputs()


def fresh(case: ModuleCase, traced_module: nn.Module) -> nn.Module:
    """Tracing ran `forward` once, which may have updated buffers (running statistics): start over."""
    traced_module.load_state_dict(case.build().state_dict())
    return traced_module


def check_on(case: ModuleCase, make_inputs) -> None:
    """tsjit's trace computes what eager computes (and leaves the same state), wherever torch.jit's does."""
    eager, oracle_module, tsjit_module = case.build(), case.build(), case.build()
    oracle = torch_trace(oracle_module, inputs_of(case, 0))
    if oracle is None:
        pytest.skip("torch.jit cannot trace this module")
    traced = quietly(trace, tsjit_module, inputs_of(case, 0), check_trace=False)
    expected = outcome(eager, make_inputs)
    fresh(case, oracle_module)
    if expected is OUT_OF_REACH or not same(expected, outcome(oracle, make_inputs)):
        pytest.skip("torch.jit's trace does not reproduce eager here either")
    fresh(case, tsjit_module)
    assert same(expected, outcome(traced, make_inputs))
    for name in case.state:
        if hasattr(oracle, name):  # a traced module keeps parameters and buffers, not Python attributes
            assert same(getattr(eager, name), getattr(traced, name)), name


@pytest.mark.parametrize("case", MODULE_CASES, ids=lambda c: c.name)
def test_traced_module_matches_eager(case: ModuleCase):
    check_on(case, lambda: inputs_of(case, 1))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("case", MODULE_CASES, ids=lambda c: c.name)
def test_traced_module_generalizes_over_sizes(case: ModuleCase, strategy: str):
    if other_inputs(inputs_of(case, 2), strategy) is None:
        pytest.skip("no tensor has a dimension to resize")
    check_on(case, lambda: resized(inputs_of(case, 2), 3, strategy))


# ---- the models, against torch.jit's traces -----------------------------------------------------------------
# torch.jit inlines each callee's optimized graph, which its peephole pass has simplified: `aten::Int` of a
# `prim::NumToTensor` becomes the int itself. tsjit's optimized graphs keep the pair (no such peephole yet), and
# constants and module attribute reads are pooled differently across the inlined methods.
ATTENTION_SIZES = {"aten::Int": 14, "prim::NumToTensor": 5, "prim::Constant": 3, "prim::GetAttr": -1}

MODELS = {
    "mlp": (lambda: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)), (3, 4), {}),
    "cnn": (lambda: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Flatten(), nn.Linear(64, 10)), (2, 1, 8, 8), {}),
    "lstm": (lambda: nn.LSTM(4, 6, num_layers=2), (5, 3, 4), {}),
    "gru": (lambda: nn.GRU(4, 6, batch_first=True), (3, 5, 4), {}),
    "transformer_encoder_layer": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), (5, 3, 8),
                                  ATTENTION_SIZES),
}


def model(name: str) -> tuple[nn.Module, tuple]:
    make, shape, _ = MODELS[name]
    torch.manual_seed(0)
    return make().eval(), (torch.randn(*shape),)


@pytest.mark.parametrize("name", MODELS)
def test_model_traces_and_matches_eager(name: str):
    module, inputs = model(name)
    traced = quietly(trace, module, inputs)
    fresh_inputs = tuple(torch.randn_like(x) for x in inputs)
    assert same(module(*fresh_inputs), traced(*fresh_inputs))


@pytest.mark.parametrize("name", MODELS)
def test_model_node_kinds_match_torch_jit(name: str):
    module, inputs = model(name)
    ours = quietly(trace, module, inputs, check_trace=False).inlined_graph
    theirs = quietly(jit.trace, module, inputs, check_trace=False).inlined_graph
    assert kinds_difference(theirs, ours) == MODELS[name][2]
