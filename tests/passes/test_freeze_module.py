# Freezing a Python module object (against torch.jit.freeze) is what most cases here test, which check_pass cannot
# express; the attribute pass on IR text is in check_pass's shape (test_pass_* at the end).
"""The freezing pass (tsjit.passes.freeze_module) against torch.jit.freeze: which attributes become constants,
which stay, what the frozen graphs look like (node kinds), and that frozen modules compute what eager does."""

import sys
from pathlib import Path

import pytest
import torch
from freeze_helpers import freeze_both, kinds
from pass_case import check_pass
from torch import Tensor, nn

import tsjit
from tsjit.ir.symbols import prim
from tsjit.passes.freeze_module import propagate_attributes

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own


class Flags(nn.Module):
    """int, float and bool attributes steering control flow: the branches fold away."""

    def __init__(self):
        super().__init__()
        self.depth = 2
        self.scale = 0.5
        self.use_relu = True
        self.name = "flags"

    def forward(self, x: Tensor) -> Tensor:
        for _ in range(self.depth):
            x = x * self.scale
        if self.use_relu:
            x = torch.relu(x)
        else:
            x = torch.sigmoid(x)
        if self.name == "flags":
            x = x + 1
        return x


class Counter(nn.Module):
    """A buffer written in forward stays a buffer; a read-only one, a parameter and an alias-free list fold."""

    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros(1))
        self.register_buffer("offset", torch.ones(3))
        self.weight = nn.Parameter(torch.randn(3))
        self.sizes = [1, 2, 3]

    def forward(self, x: Tensor) -> Tensor:
        self.steps.add_(1)
        return x * self.weight + self.offset + self.sizes[1] + self.steps


class Assigned(nn.Module):
    """An attribute assigned in forward (prim::SetAttr) is never folded."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: Tensor) -> Tensor:
        self.calls = self.calls + 1
        return x + self.calls


class Viewed(nn.Module):
    """A write through a view of a buffer is a write to the buffer."""

    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.zeros(2, 2))

    def forward(self, x: Tensor) -> Tensor:
        flat = self.state.view(-1)
        flat.add_(1)
        return x + self.state


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("hits", torch.zeros(1))

    def forward(self, x: Tensor) -> Tensor:
        self.hits += 1
        return self.lin(x)

    @torch.jit.export
    def unused(self, x: Tensor) -> Tensor:
        return x


class Outer(nn.Module):
    """A submodule whose buffer is written keeps that buffer only; its other members and methods go."""

    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.table = nn.Parameter(torch.arange(6.0).reshape(2, 3))

    def forward(self, x: Tensor) -> Tensor:
        return self.inner(x) + self.table.sum()


CASES = {"flags": (Flags, (3, 4)), "counter": (Counter, (2, 3)), "assigned": (Assigned, (3,)),
         "viewed": (Viewed, (2, 2)), "outer": (Outer, (2, 4))}


@pytest.mark.parametrize("name", CASES)
def test_frozen_graph_has_torch_jit_node_kinds(name):
    factory, shape = CASES[name]
    torch.manual_seed(0)
    mine, theirs = freeze_both(factory())
    assert kinds(mine.graph) == kinds(theirs.graph)


@pytest.mark.parametrize("name", CASES)
def test_frozen_module_computes_what_eager_does(name):
    factory, shape = CASES[name]
    torch.manual_seed(0)
    eager, copy = factory().eval(), factory().eval()
    copy.load_state_dict(eager.state_dict())
    frozen = tsjit.freeze(tsjit.script(copy))
    for _ in range(2):  # twice: mutated state must carry over from call to call
        x = torch.randn(shape)
        torch.testing.assert_close(frozen(x), eager(x))


def test_attributes_left_are_those_torch_jit_leaves():
    torch.manual_seed(0)
    for factory in (Counter, Assigned, Viewed):
        mine, theirs = freeze_both(factory())
        assert sorted(mine.state_dict()) == sorted(theirs.state_dict())
        assert not hasattr(mine, "training")


def test_submodule_keeps_only_what_is_read():
    frozen = tsjit.freeze(tsjit.script(Outer().eval()))
    assert frozen._c.type.attribute_names == ("inner",)
    assert frozen.inner._c.type.attribute_names == ("hits",)
    assert "unused" not in frozen.inner._c.type.methods


def test_constants_are_named_by_attribute_path_and_detached():
    frozen = tsjit.freeze(tsjit.script(Outer().eval()))
    constants = {n.output().debug_name: n for n in frozen.graph.nodes() if n.kind is prim.Constant}
    weight = constants["self.inner.lin.weight"].t("value")
    assert not weight.requires_grad and weight.shape == (4, 4)


def test_folded_tensor_computations_become_constants():
    """`self.table.sum()` on a frozen parameter runs at freezing time, as torch.jit's constant propagation."""
    frozen = tsjit.freeze(tsjit.script(Outer().eval()))
    assert "aten::sum" not in kinds(frozen.graph)


def test_shared_tensor_written_through_one_attribute_stays_in_both():
    class Shared(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("a", torch.zeros(2))
            self.b = self.a  # the same tensor under two names

        def forward(self, x: Tensor) -> Tensor:
            self.a.add_(1)
            return x + self.b

    frozen = tsjit.freeze(tsjit.script(Shared().eval()))
    assert kinds(frozen.graph).count("prim::GetAttr") == 2
    x = torch.zeros(2)
    torch.testing.assert_close(frozen(x), torch.ones(2))
    torch.testing.assert_close(frozen(x), torch.full((2,), 2.0))


def _corpus_programs():
    corpus = Path(__file__).parents[1] / "ir" / "corpus"
    sys.path.insert(0, str(corpus))
    try:
        import programs
    finally:
        sys.path.remove(str(corpus))
    return corpus, programs


@pytest.mark.parametrize("program", ["submodule_tree", "conv", "small_constants"])
def test_corpus_frozen_graphs(program):
    """The frozen graphs torch.jit printed for the corpus (tests/ir/corpus/graphs/*_frozen.ir)."""
    corpus, programs = _corpus_programs()
    expected = tsjit.parse_ir((corpus / "graphs" / f"{program}_frozen.ir").read_text())
    torch.manual_seed(0)
    frozen = tsjit.freeze(tsjit.script(programs.SCRIPTED_MODULES[program][0]().eval()))
    assert kinds(frozen.graph) == kinds(expected)
    assert _attribute_constants(frozen.graph) == _attribute_constants(expected)


@pytest.mark.parametrize("program", ["linear", "module_list_loop", "attributes", "mutates_state", "uses_interface"])
def test_corpus_modules_freeze_as_torch_jit(program):
    """Module lists and dicts unrolled, Final and other attributes folded, state kept, interface calls inlined."""
    _, programs = _corpus_programs()
    torch.manual_seed(0)
    mine, theirs = freeze_both(programs.SCRIPTED_MODULES[program][0]())
    assert kinds(mine.graph) == kinds(theirs.graph)


def _attribute_constants(graph) -> list[str]:
    return sorted(n.output().debug_name for n in graph.nodes()
                  if n.kind is prim.Constant and n.output().debug_name.startswith("self."))


def test_pass_read_only_attributes_become_constants():
    """propagate_attributes on the scripted graph's text: every attribute of Flags is read only."""
    scripted = tsjit.script(Flags().eval())
    check_pass(propagate_attributes, str(scripted.graph), root=scripted._c, mutable=set(),
               inputs=[(scripted._c, torch.randn(3, 4)) for _ in range(2)], absent=["prim::GetAttr"],
               present=["self.depth", "self.scale", "self.use_relu", "self.name"])


def test_pass_mutable_attributes_stay():
    """`steps` written in forward stays a GetAttr; the others fold. Not run: the write changes the module's state
    between the runs before and after (test_frozen_module_computes_what_eager_does runs it)."""
    scripted = tsjit.script(Counter().eval())
    check_pass(propagate_attributes, str(scripted.graph), root=scripted._c, mutable={(id(scripted._c), "steps")},
               run=False, present=['prim::GetAttr[name="steps"]', 'prim::GetAttr[name="steps"]'],
               absent=['name="weight"', 'name="offset"', 'name="sizes"'])
