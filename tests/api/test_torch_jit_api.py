"""The rest of torch.jit's public API (issue 14, item 4), each name used as a torch.jit user uses it, with
torch.jit itself as the oracle: the same program through `torch.jit.<name>` and `tsjit.<name>` must give the same
results, code, errors and warnings. (docs/torch_jit_api.md lists every public name; test_api_table.py checks it.)"""

# ruff: noqa: UP006, UP035, UP045  (written as TorchScript users do)

from __future__ import annotations

import importlib.metadata
import io
import os
import subprocess
import sys
import textwrap
import warnings
from typing import Any, Dict, List, Optional, Tuple

import pytest
import torch
from torch import nn

import tsjit

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own
JITS = [pytest.param(torch.jit, id="torch.jit"), pytest.param(tsjit, id="tsjit")]


class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 2 + 1


def scale_shift(x, s: float):
    return x * s - 1


# ---- archives: save / save_to_buffer ----------------------------------------------------------------------------
def test_module_save_to_buffer_loads_in_torch_jit_and_back(tmp_path):
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    mine = tsjit.script(Affine())
    buffer = mine.save_to_buffer()
    assert isinstance(buffer, bytes)
    torch.testing.assert_close(torch.jit.load(io.BytesIO(buffer))(x), mine(x))
    mine.save(tmp_path / "m.pt", _extra_files={"note.txt": "hi"})
    files = {"note.txt": ""}
    torch.testing.assert_close(torch.jit.load(str(tmp_path / "m.pt"), _extra_files=files)(x), mine(x))
    assert files["note.txt"] == b"hi"
    theirs = torch.jit.script(Affine())
    torch.testing.assert_close(tsjit.load(theirs.save_to_buffer())(x), theirs(x))


def test_function_save_to_buffer_is_a_module_whose_forward_is_the_function(tmp_path):
    x = torch.randn(3)
    mine, theirs = tsjit.script(scale_shift), torch.jit.script(scale_shift)
    for buffer in (mine.save_to_buffer(), theirs.save_to_buffer()):
        torch.testing.assert_close(torch.jit.load(io.BytesIO(buffer))(x, 2.0), theirs(x, 2.0))
        torch.testing.assert_close(tsjit.load(buffer)(x, 2.0), mine(x, 2.0))
    mine.save(str(tmp_path / "f.pt"))
    torch.testing.assert_close(torch.jit.load(str(tmp_path / "f.pt"))(x, 3.0), theirs(x, 3.0))


# ---- code_with_constants, graph_for, define ----------------------------------------------------------------------
class WithTensorConstant(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([1.0, 2.0]))

    def forward(self, x):
        return x + self.w * 3


def test_code_with_constants_names_the_constant_table_as_torch_jit():
    results = {}
    for jit in (torch.jit, tsjit):
        frozen = jit.freeze(jit.script(WithTensorConstant()).eval())
        code, constants = frozen.code_with_constants
        results[jit.__name__] = code, constants.const_mapping
        assert constants.c0 is constants.const_mapping["c0"]
        method_code, method_constants = frozen.forward.code_with_constants
        assert method_code == code and method_constants.keys() == constants.const_mapping.keys()
    (their_code, theirs), (my_code, mine) = results["torch.jit"], results["tsjit"]
    assert my_code == their_code and "CONSTANTS.c0" in my_code
    assert mine.keys() == theirs.keys()
    for name in mine:
        torch.testing.assert_close(mine[name], theirs[name])


@pytest.mark.parametrize("jit", JITS)
def test_module_graph_for_is_forward_specialized_to_the_arguments(jit):
    module = jit.script(Affine())
    x = torch.randn(4, 3)
    for _ in range(3):  # torch.jit's plan optimized for good (profiled runs done), whatever ran before
        module(x)
    graph = module.graph_for(x)
    assert "Float(" in str(graph)  # specialized (torch.jit: profiled) to the float input
    assert str(graph) == str(module.forward.graph_for(module, x))  # a method's takes the module first


class PointwiseModule(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2 + 1


def test_module_graph_for_before_any_call_is_the_optimized_graph():
    """As a function's: the arguments' plan profiles on them first, so the graph is the optimized one (fused
    behind a type check), not the profiling plan (`tsjit show --plan` of a module printed prim::profile nodes)."""
    module = tsjit.script(PointwiseModule())
    graph_kinds = {str(node.kind) for node in module.graph_for(torch.randn(4, 3)).all_nodes()}
    assert "prim::profile" not in graph_kinds and {"prim::TypeCheck", "prim::FusionGroup"} <= graph_kinds


def linear_then_pointwise() -> nn.Module:
    """An instance of a new class each time: instances of one class share its methods' executors and plans."""
    class LinearThenPointwise(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.linear(x)) * 2 + 1

    return LinearThenPointwise()


def differentiates(module, x, mode: str) -> bool:
    """Whether the graph `graph_for(x)` gives in this grad mode, after three calls in it, differentiates."""
    with torch.no_grad() if mode == "no_grad" else torch.enable_grad():
        for _ in range(3):
            module(x)
        return "prim::DifferentiableGraph" in str(module.graph_for(x))


@pytest.mark.parametrize("modes", [("no_grad", "grad"), ("grad", "no_grad")], ids="-then-".join)
def test_module_graph_for_is_the_plan_for_the_grad_mode(modes):
    """The parameters need gradients in grad mode only, which the inputs' types do not show: whichever mode ran
    first, graph_for gives the current mode's plan, as torch.jit's simple executor does (its profiling executor
    keeps the first mode's plan for both, its guards sending the other mode to a fallback)."""
    x = torch.randn(3, 4)
    previous = torch._C._jit_set_profiling_executor(False)
    try:
        oracle = torch.jit.script(linear_then_pointwise())
        expected = {mode: differentiates(oracle, x, mode) for mode in modes}
    finally:
        torch._C._jit_set_profiling_executor(previous)
    assert expected == {"grad": True, "no_grad": False}
    ours = tsjit.script(linear_then_pointwise())
    assert {mode: differentiates(ours, x, mode) for mode in modes} == expected


def plus_three(x: int) -> int:
    return x + 3


@pytest.mark.parametrize("jit", JITS)
def test_compilation_unit_define_resolves_names_where_it_is_called(jit):
    offset = 3  # noqa: F841  (named by the source below: a Python int is no TorchScript value, in both)
    cu = jit.CompilationUnit()
    cu.define("def add_offset(x: int) -> int:\n    return plus_three(x)\n"
              "def twice(x: int) -> int:\n    return add_offset(x) * 2\n")
    assert cu.twice(4) == 14 and cu.find_function("twice") is not None
    with pytest.raises(Exception, match="undefined value add_offset"):  # one define's functions see each other
        cu.define("def thrice(x: int) -> int:\n    return add_offset(x) * 3\n")
    with pytest.raises(Exception, match="python value of type 'int' cannot be used as a value"):
        cu.define("def shifted(x: int) -> int:\n    return x + offset\n")


@pytest.mark.parametrize("jit", JITS)
def test_script_module_define_adds_methods(jit):
    module = jit.script(Affine())
    module.define("def doubled(self, x):\n    return self.forward(x) * 2\n")
    x = torch.randn(2, 3)
    torch.testing.assert_close(module.doubled(x), module(x) * 2)
    with pytest.raises(Exception, match="Can't redefine method: doubled on class: __torch__.test_torch_jit_api.Affine"):
        module.define("def doubled(self, x):\n    return x\n")


# ---- legacy subclassing: ScriptModule, script_method, Attribute, define in __init__ -------------------------------
def legacy_module(jit):
    class Legacy(jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.scale = jit.Attribute(2.0, float)
            self.seen = jit.Attribute([], List[int])
            self.linear = nn.Linear(3, 3)
            self.define("def shift(self, x):\n    return x + 1\n")

        @jit.script_method
        def forward(self, x):
            return self.helper(self.linear(x)) * self.scale

        @jit.script_method
        def helper(self, x):
            return self.shift(x)

        def in_python(self):
            return self.scale + 1

    torch.manual_seed(0)
    return Legacy


def test_legacy_script_module_subclass_compiles_its_script_methods():
    x = torch.randn(2, 3)
    (their_class, theirs), (my_class, mine) = [(c, c()) for c in map(legacy_module, (torch.jit, tsjit))]
    assert isinstance(mine, my_class) and isinstance(mine, tsjit.ScriptModule)
    torch.testing.assert_close(mine(x), theirs(x))
    torch.testing.assert_close(mine.helper(x), theirs.helper(x))
    assert mine.code == theirs.code
    assert (mine.scale, mine.seen, mine.in_python()) == (theirs.scale, theirs.seen, theirs.in_python())
    assert (mine.scale, mine.seen, mine.in_python()) == (2.0, [], 3.0)
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    torch.testing.assert_close(torch.jit.load(io.BytesIO(mine.save_to_buffer()))(x), theirs(x))


# ---- errors and warnings -----------------------------------------------------------------------------------------
def raises_value_error(x):
    if bool(x.sum() > 0):
        raise ValueError("positive")
    return x


@pytest.mark.parametrize("jit", JITS)
def test_error_is_what_a_failing_script_raises(jit):
    with pytest.raises(jit.Error, match="positive"):
        jit.script(raises_value_error)(torch.ones(2))
    assert issubclass(jit.Error, Exception)


@pytest.mark.parametrize("jit", JITS)
def test_script_warning_is_a_warning(jit):
    assert issubclass(jit.ScriptWarning, Warning)


# ---- is_scripting, is_tracing, isinstance, script_if_tracing -------------------------------------------------------
@pytest.mark.parametrize(("jit", "asked"), [(torch.jit, torch.jit), (tsjit, tsjit), (tsjit, torch.jit)],
                         ids=["torch.jit", "tsjit", "torch.jit's-flags-in-tsjit"])
def test_is_scripting_and_is_tracing_answer_where_they_are_asked(jit, asked):
    """Asked of tsjit or of torch.jit inside tsjit's script and trace, as of torch.jit inside torch.jit's."""
    def where(x):
        if asked.is_scripting():
            return x + 1
        if asked.is_tracing():
            return x + 2
        return x + 3

    x = torch.zeros(1)
    assert (asked.is_scripting(), asked.is_tracing()) == (False, False)
    assert [float(jit.script(where)(x)), float(jit.trace(where, x)(x)), float(where(x))] == [1.0, 2.0, 3.0]


ISINSTANCE_CASES = [
    ([1, 2], List[int]), ([1, 2.0], List[int]), ([], List[str]), ({"a": torch.ones(1)}, Dict[str, torch.Tensor]),
    (None, Optional[int]), (3, Optional[int]), ((1, "a"), Tuple[int, str]), ((1,), Tuple[int, str]), (1, float),
    (True, int), (torch.ones(1), torch.Tensor), ([[1]], List[List[int]]), ({1: [2]}, Dict[int, List[int]]),
]


@pytest.mark.filterwarnings("ignore:The inner type of a container is lost")
@pytest.mark.parametrize(("value", "target_type"), ISINSTANCE_CASES)
def test_isinstance_in_python_answers_as_torch_jit(value, target_type):
    assert tsjit.isinstance(value, target_type) == torch.jit.isinstance(value, target_type)


@pytest.mark.parametrize("bare", [list, List, Dict])
def test_isinstance_refuses_a_container_without_element_types_as_torch_jit(bare):
    with pytest.raises(RuntimeError) as theirs:
        torch.jit.isinstance([], bare)
    with pytest.raises(tsjit.TsjitError) as mine:
        tsjit.isinstance([], bare)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("jit", JITS)
def test_isinstance_in_script_refines_the_type(jit):
    def count(x: Any) -> int:
        if jit.isinstance(x, List[int]):
            return len(x)
        return -1

    scripted = jit.script(count)
    assert (scripted([1, 2, 3]), scripted("no")) == (3, -1)


def helper_with_branch(x):
    if bool(x.sum() > 0):
        return x * 2
    return -x


@pytest.mark.parametrize("jit", JITS)
def test_script_if_tracing_keeps_control_flow_in_a_trace(jit):
    helper = jit.script_if_tracing(helper_with_branch)
    recorded = jit.trace(lambda x: helper(x) + 1, torch.ones(2))
    torch.testing.assert_close(recorded(-torch.ones(3)), torch.full((3,), 2.0))  # the other branch, not baked in


# ---- freezing, operator lists ------------------------------------------------------------------------------------
class ConvNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.norm = nn.BatchNorm2d(4)

    def forward(self, x):
        return self.norm(self.conv(x))


@pytest.mark.parametrize("jit", JITS)
def test_run_frozen_optimizations_folds_what_freeze_left(jit):
    torch.manual_seed(0)
    module = ConvNorm().eval()
    x = torch.randn(1, 3, 8, 8)
    frozen = jit.freeze(jit.script(module), optimize_numerics=False)
    assert "aten::batch_norm" in str(frozen.graph)
    jit.run_frozen_optimizations(frozen)
    assert "aten::batch_norm" not in str(frozen.graph)
    torch.testing.assert_close(frozen(x), module(x), rtol=1e-4, atol=1e-5)


class ManyOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, x, n: int):
        sizes: List[int] = []
        for i in range(n):
            sizes.append(i)
        y = torch.relu(self.linear(x)).sum(0) * len(sizes) + x.size(0)
        if bool(y.sum() > 0):
            y = y / 2
        return y + torch.tensor([1.0, 2.0, 3.0])

    @torch.jit.export
    def other(self, x):
        return torch.cat([x, x]).view(-1)


def test_export_opnames_lists_the_operators_as_torch_jit():
    assert tsjit.export_opnames(tsjit.script(ManyOps())) == torch.jit.export_opnames(torch.jit.script(ManyOps()))


# ---- executor switches: optimized_execution, fuser, strict_fusion --------------------------------------------------
def pointwise(x):
    return (x + 1) * x - 2


def kinds(graph) -> set[str]:
    """The kinds of every node, in blocks too (the profiling executor's fusion groups sit behind a guard's If)."""
    return {str(node.kind) for node in graph.all_nodes()}


def test_optimized_execution_off_runs_the_graph_as_emitted():
    x = torch.randn(5)
    with tsjit.optimized_execution(False):
        unoptimized = tsjit.script(pointwise).graph_for(x)
    with torch.jit.optimized_execution(False):  # torch.jit's runs as well
        torch.testing.assert_close(torch.jit.script(pointwise)(x), pointwise(x))
    assert {"aten::add", "aten::mul", "aten::sub"} <= kinds(unoptimized)
    assert "prim::FusionGroup" not in kinds(unoptimized)
    with tsjit.optimized_execution(True):
        assert "prim::FusionGroup" in kinds(tsjit.script(lambda_free_copy()).graph_for(x))


def test_optimized_execution_is_read_on_every_call_as_in_torch_jit():
    """torch.jit's executors read the switch when they pick a plan: inputs without a plan run unoptimized inside
    `optimized_execution(False)` and get their optimized plan outside it; an optimized plan, once made, runs inside
    too (ProfilingGraphExecutorImpl::getPlanFor returns it before looking at the switch)."""
    x = torch.randn(5)
    fresh = tsjit.script(lambda_free_copy())
    with tsjit.optimized_execution(False):
        torch.testing.assert_close(fresh(x), pointwise(x))
        assert "prim::FusionGroup" not in kinds(fresh.graph_for(x))
    torch.testing.assert_close(fresh(x), pointwise(x))
    assert "prim::FusionGroup" in kinds(fresh.graph_for(x))
    with tsjit.optimized_execution(False):
        torch.testing.assert_close(fresh(x), pointwise(x))
        assert "prim::FusionGroup" in kinds(fresh.graph_for(x))


def lambda_free_copy():
    """A function like `pointwise` that no executor has seen (plans keep the options they were compiled under)."""
    def pointwise_again(x):
        return (x + 1) * x - 2
    return pointwise_again


@pytest.mark.parametrize(("name", "fused"), [("fuser0", True), ("fuser1", True), ("fuser2", False), ("none", False)])
def test_fuser_names_switch_fusion(name, fused):
    x = torch.randn(5)
    with tsjit.fuser(name):
        graph = tsjit.script(lambda_free_copy()).graph_for(x)
    if name != "fuser1":  # torch.jit's NNC needs LLVM on the CPU, which this torch build lacks
        with torch.jit.fuser(name):  # torch.jit takes the same names
            torch.testing.assert_close(torch.jit.script(pointwise)(x), pointwise(x))
    assert ("prim::FusionGroup" in kinds(graph)) is fused


@pytest.mark.parametrize("jit", JITS)
def test_fuser_refuses_an_unknown_name(jit):
    with pytest.raises(Exception, match=r"unrecognized fuser option \(name: fuser9\)"):
        with jit.fuser("fuser9"):
            pass


def strict_fusion_of(jit, with_sum: bool):
    if with_sum:
        def strict(x):
            with jit.strict_fusion():
                y = x.sum()
                return x + y
    else:
        def strict(x):
            with jit.strict_fusion():
                return x + x + x
    return strict


def unfused_error(jit, function, x) -> str:
    """The error torch.jit (after its profiling runs) or tsjit (on the first call) raises."""
    scripted = jit.script(function)
    with pytest.raises(Exception, match="Found unfused operators") as error:
        for _ in range(3):
            scripted(x)
    return str(error.value)


@pytest.mark.parametrize("jit", JITS)
def test_strict_fusion_block_that_cannot_fuse_raises_as_torch_jit(jit):
    message = unfused_error(jit, strict_fusion_of(jit, with_sum=True), torch.randn(4, 4))
    assert "aten::sum" in message and "strict_fusion()" in message  # the operator and the `with` line


def test_strict_fusion_block_runs_fused_and_fails_where_fusion_is_off():
    x = torch.randn(4, 4)
    strict = strict_fusion_of(tsjit, with_sum=False)
    scripted = tsjit.script(strict)
    torch.testing.assert_close(scripted(x), 3 * x)
    assert "prim::FusionGroup" in kinds(scripted.graph_for(x))
    with tsjit.fuser("none"):  # torch.jit's CPU fusers are off by default: it reports the same block so
        mine = unfused_error(tsjit, strict_fusion_of(tsjit, with_sum=False), x)
    theirs = unfused_error(torch.jit, strict_fusion_of(torch.jit, with_sum=False), x)
    assert mine.count("aten::add.Tensor") == theirs.count("aten::add.Tensor") == 2


@pytest.mark.parametrize("jit", JITS)
def test_strict_fusion_outside_script_warns(jit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        strict_fusion_of(jit, with_sum=False)(torch.ones(2))
    assert any("Only works in script mode" in str(w.message) for w in caught)


# ---- script(example_inputs=...) ----------------------------------------------------------------------------------
def add_ints(a, b):
    return a + b


def add_tensors(a, b):
    return a + b


def pick(a, b):
    return b


def first_times(a, n):
    return a[0] * n


EXAMPLES = [  # a function each: torch.jit keeps the first compilation of a function for later calls
    (add_ints, [(3, 4)], "add_ints(int a, int b) -> int"),
    (add_tensors, [(torch.ones(2), torch.ones(1)), (torch.ones(1), torch.ones(2, 2))],
     "add_tensors(Tensor a, Tensor b) -> Tensor"),
    (pick, [(1, 2), (1, 2.5)], "pick(int a, Any b) -> Any"),
    (first_times, {first_times: [([1, 2], 3)]}, "first_times(int[] a, int n) -> int"),
]


@pytest.mark.parametrize(("function", "examples", "schema"), EXAMPLES, ids=lambda v: getattr(v, "__name__", ""))
def test_example_inputs_type_unannotated_parameters(function, examples, schema):
    assert str(tsjit.script(function, example_inputs=examples).schema) == schema
    assert str(tsjit.script(function).schema).startswith(f"{function.__name__}(Tensor a")  # the cached one: as written
    if importlib.util.find_spec("monkeytype") is not None:  # torch.jit infers types only with MonkeyType
        assert str(torch.jit.script(function, example_inputs=examples).schema) == schema


class ScaledBy(torch.nn.Module):
    def forward(self, x, scale):
        return x * scale


class Typed(torch.nn.Module):  # forward, a submodule's forward and a helper method, none annotated
    def __init__(self):
        super().__init__()
        self.inner = ScaledBy()

    def forward(self, x, n, flag):
        y = self.inner(x, 2.5)
        if flag:
            y = y + n
        return self.helper(y, n)

    def helper(self, y, k):
        return y - k


def _module_examples(module):
    x = torch.rand(3)
    return {"list": [(x, 3, True), (x, 4, False)], "dict": {module.forward: [(x, 3, True)]}}


@pytest.mark.parametrize("form", ["list", "dict"])
def test_example_inputs_type_a_modules_methods(form):
    module = Typed()
    scripted = tsjit.script(module, example_inputs=_module_examples(module)[form])
    assert str(scripted.forward.schema).endswith("Typed self, Tensor x, int n, bool flag) -> Tensor")
    x = torch.rand(3)
    torch.testing.assert_close(scripted(x, 3, True), module(x, 3, True))
    if importlib.util.find_spec("monkeytype") is not None:  # torch.jit infers types only with MonkeyType
        other = Typed()
        assert scripted.code == torch.jit.script(other, example_inputs=_module_examples(other)[form]).code


# ---- fork and futures --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("jit", JITS)
def test_fork_returns_a_torch_future_that_then_chains(jit):
    scripted = jit.script(scale_shift)
    future = jit.fork(scripted, torch.ones(2), 3.0)
    assert isinstance(future, torch._C.Future)  # tsjit's is a torch.futures.Future, which derives from it
    chained = future.then(lambda done: done.wait() * 10)
    torch.testing.assert_close(chained.wait(), torch.full((2,), 20.0))
    torch.testing.assert_close(jit.wait(future), torch.full((2,), 2.0))
    assert torch.futures.wait_all([jit.fork(scripted, torch.ones(1), 1.0)]) == [torch.zeros(1)]


def fails(x: int) -> int:
    if x > 0:
        raise ValueError("forked failure")
    return x


@pytest.mark.parametrize("jit", JITS)
def test_a_failed_fork_raises_by_the_wait(jit):
    with pytest.raises(Exception, match="forked failure"):  # torch.jit's Python fork runs it at once, and raises
        jit.wait(jit.fork(jit.script(fails), 1))


def test_a_failed_tsjit_fork_raises_through_then():
    future = tsjit.fork(tsjit.script(fails), 1)
    with pytest.raises(RuntimeError, match="forked failure"):  # torch's `then` wraps the callback's error
        future.then(lambda done: done.wait()).wait()


# ---- TSJIT=0 / PYTORCH_JIT=0, __version__ ----------------------------------------------------------------------
SWITCHED_OFF = textwrap.dedent("""
    import torch, tsjit
    from torch import nn
    def f(x):
        return x * 2
    class Legacy(tsjit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.a = tsjit.Attribute(1.5, float)
        @tsjit.script_method
        def forward(self, x):
            return x * self.a
    module = nn.Linear(2, 2)
    legacy = Legacy()
    print(tsjit.script(f) is f, tsjit.script(module) is module, tsjit.trace(f, torch.ones(1)) is f,
          tsjit.trace(module, torch.ones(2)) is module, type(legacy).__mro__[1].__name__, legacy.a,
          torch.jit.script(f) is f)
""")


@pytest.mark.parametrize("variable", ["TSJIT", "PYTORCH_JIT"])
def test_switched_off_script_and_trace_return_the_python_objects(variable, tmp_path):
    program = tmp_path / "switched_off.py"  # a file: torch.jit.script needs the source
    program.write_text(SWITCHED_OFF)
    environment = {**os.environ, variable: "0", "PYTHONPATH": os.path.dirname(os.path.dirname(tsjit.__file__))}
    result = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, env=environment,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    torch_off = variable == "PYTORCH_JIT"  # torch.jit reads only its own variable
    assert result.stdout.split() == ["True", "True", "True", "True", "ScriptModule", "1.5", str(torch_off)]


def test_version_is_the_package_metadata():
    assert tsjit.__version__ == importlib.metadata.version("tsjit")


# ---- the classes tracing a module returns ---------------------------------------------------------------------------
class TracedHolder(nn.Module):
    def __init__(self, jit):
        super().__init__()
        self.linear = nn.Linear(2, 2)
        self.scripted = jit.script(nn.ReLU())

    def forward(self, x):
        return self.scripted(self.linear(x))


@pytest.mark.parametrize("jit", JITS)
def test_tracing_a_module_returns_a_top_level_traced_module(jit):
    """The root is a TopLevelTracedModule, a traced submodule a TracedModule, a scripted one stays scripted."""
    model, x = TracedHolder(jit), torch.randn(3, 2)
    for traced in (jit.trace(model, x), jit.trace_module(model, {"forward": x})):
        assert type(traced) is jit.TopLevelTracedModule and isinstance(traced, jit.ScriptModule)
        assert type(traced.linear) is jit.TracedModule and not isinstance(traced.linear, jit.TopLevelTracedModule)
        assert isinstance(traced.scripted, jit.ScriptModule) and not isinstance(traced.scripted, jit.TracedModule)
        torch.testing.assert_close(traced(x), model(x))
