"""The pass registry: every entry runs on IR text, has its test file, and is what the pipelines run."""

from __future__ import annotations

import ast
import inspect
import pathlib

import pytest
import torch

from tsjit import opt
from tsjit.ir.parser import parse_ir
from tsjit.passes import registry

TESTS = pathlib.Path(__file__).parent
PACKAGE = pathlib.Path(registry.__file__).parents[1]
GRAPH = """graph(%x : Float(2, 3), %n : int, %flag : bool):
  %one : int = prim::Constant[value=1]()
  %a : Float(2, 3) = aten::add(%x, %x, %one)
  %b : Float(2, 3) = aten::add(%x, %x, %one)
  %dead : Tensor = aten::neg(%x)
  %m : int = aten::mul(%n, %one)
  %y : Tensor = prim::If(%flag)
    block0():
      %r : Tensor = aten::relu(%a)
      -> (%r)
    block1():
      %s : Tensor = aten::sigmoid(%b)
      -> (%s)
  %t : (Tensor, int) = prim::TupleConstruct(%y, %m)
  return (%t)
"""


@pytest.mark.parametrize("name", sorted(registry.PASSES))
def test_every_pass_runs_on_ir_text(name, tmp_path, capsys):
    path = tmp_path / "g.ir"
    path.write_text(GRAPH)
    assert opt.main(["-p", name, str(path)]) == 0, capsys.readouterr().err
    graph = parse_ir(capsys.readouterr().out)
    graph.lint()


@pytest.mark.parametrize("name", sorted(registry.PASSES))
def test_every_pass_is_a_graph_only_function_of_its_name(name):
    function = registry.PASSES[name].load()
    assert function.__name__ == name and function.__module__ == registry.PASSES[name].module
    parameters = list(inspect.signature(function).parameters.values())
    assert parameters[0].name == "graph"
    assert all(p.default is not p.empty for p in parameters[1:]), f"{name} needs more than a graph"
    assert function.__doc__, f"{name} has no docstring"


def test_every_pass_has_its_test_file():
    missing = [name for name in registry.PASSES if not (TESTS / f"test_{name}.py").exists()]
    assert not missing, f"registered passes without tests/passes/test_<name>.py: {missing}"


def test_passes_that_need_more_are_not_registered():
    assert not set(registry.NOT_GRAPH_ONLY) & set(registry.PASSES)
    assert all(reason.startswith("needs ") for reason in registry.NOT_GRAPH_ONLY.values())


def _run_pass_arguments() -> list[tuple[str, str]]:
    """(file, name) of every function given to run_pass in the package; a loop variable stands for the names in
    the tuple it runs over (`for fold in _FOLDINGS: run_pass(fold, graph)`)."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        tuples = {target.id: node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                  for target in node.targets if isinstance(target, ast.Name)}
        loops = {node.target.id: tuples.get(getattr(node.iter, "id", None), node.iter) for node in ast.walk(tree)
                 if isinstance(node, ast.For) and isinstance(node.target, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "run_pass" and node.args and \
                    isinstance(node.args[0], ast.Name):
                name = node.args[0].id
                names = [e.id for e in getattr(loops.get(name), "elts", []) if isinstance(e, ast.Name)] or [name]
                found += [(str(path.relative_to(PACKAGE)), n) for n in names]
    return found


def test_the_pipelines_run_registered_passes():
    """The frontend's clean-up, the executor's stages, freezing and MLIR preparation share the registry."""
    calls = _run_pass_arguments()
    assert len(calls) > 40
    tools = {("cli/opt.py", "function"), ("passes/pass_diff.py", "function")}  # they run the pass their user names
    unknown = [(path, name) for path, name in calls if name not in registry.PASSES
               and name not in registry.NOT_GRAPH_ONLY and (path, name) not in tools]
    assert not unknown, f"run_pass given passes the registry does not have: {unknown}"


def test_the_executor_pipeline_runs_registered_passes_in_order(monkeypatch):
    """What the graph executor runs on a graph, recorded: the same passes, in the stage order."""
    from tsjit.runtime import graph_executor

    ran = []
    real = graph_executor.run_pass

    def recording(pass_fn, graph, *args, **kwargs):
        ran.append(pass_fn.__name__)
        return real(pass_fn, graph, *args, **kwargs)

    monkeypatch.setattr(graph_executor, "run_pass", recording)
    graph = parse_ir(GRAPH)
    graph_executor.specialize_types(graph, graph_executor.create_argument_spec([torch.randn(2, 3), 2, True]))
    graph_executor.optimize_graph(graph)
    assert set(ran) <= set(registry.PASSES)
    assert ran[:8] == ["specialize_autograd_zero", "lower_simple_tuples", "constant_propagation_immutable_types",
                       "propagate_shapes", "eliminate_dead_code", "eliminate_common_subexpression",
                       "constant_pooling", "peephole_optimize"]


def test_aliases_name_single_pass_modules_and_short_names():
    assert registry.lookup("dce").name == registry.lookup("dead_code_elimination").name == "eliminate_dead_code"
    assert registry.lookup("constant_propagation").name == "constant_propagation"
    with pytest.raises(KeyError):
        registry.lookup("static_control_flow_typo")
