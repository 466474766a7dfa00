"""`tsjit opt` and its older name `python -m tsjit.opt`, run as subprocesses the way people and scripts run them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cli_runner import REPOSITORY, tsjit

GRAPH = """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %1)
  %b : Tensor = aten::add(%x, %x, %1)
  %dead : Tensor = aten::neg(%x)
  %c : Tensor = aten::mul(%a, %b)
  return (%c)
"""


def opt(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
    """`python -m tsjit.opt ARGS`."""
    return subprocess.run([sys.executable, "-m", "tsjit.opt", *args], input=stdin, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPOSITORY), **env}, timeout=120)


@pytest.fixture
def graph_file(tmp_path):
    path = tmp_path / "g.ir"
    path.write_text(GRAPH)
    return str(path)


def test_runs_passes_in_order_and_prints_the_graph(graph_file):
    result = opt("-p", "cse,dce", graph_file)
    assert result.returncode == 0, result.stderr
    assert result.stdout == """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %1)
  %c : Tensor = aten::mul(%a, %a)
  return (%c)
"""


def test_reads_stdin_and_accepts_module_and_function_names():
    by_module = opt("-p", "dead_code_elimination", "-", stdin=GRAPH)
    by_function = opt("-p", "eliminate_dead_code", "-", stdin=GRAPH)
    assert by_module.returncode == by_function.returncode == 0
    assert by_module.stdout == by_function.stdout
    assert "aten::neg" not in by_module.stdout and by_module.stdout.count("aten::add") == 2


def test_no_passes_prints_the_graph_back(graph_file):
    result = opt(graph_file)
    assert result.returncode == 0 and result.stdout == GRAPH


def test_list_names_every_registered_pass_and_what_needs_more():
    from tsjit.passes import registry

    result = opt("--list")
    assert result.returncode == 0
    listed, _, rest = result.stdout.partition("not runnable on IR text:\n")
    names = [line.split(":")[0].split(" ")[0] for line in listed.splitlines()]
    assert names == list(registry.PASSES)
    assert "eliminate_common_subexpression (common_subexpression_elimination, cse): a node equal" in listed
    assert [line.split(":")[0].strip() for line in rest.splitlines()] == list(registry.NOT_GRAPH_ONLY)


def test_a_pass_runs_by_its_own_name():
    """`constant_propagation` is the pass of that name, not the first graph-only function of its module."""
    text = """graph(%x : Tensor):
  %t : Tensor = prim::Constant[value={2}]()
  %y : Tensor = aten::mul(%t, %t)
  return (%y)
"""
    assert "aten::mul" in opt("-p", "constant_propagation_immutable_types", "-", stdin=text).stdout
    assert "aten::mul" not in opt("-p", "constant_propagation", "-", stdin=text).stdout


@pytest.mark.parametrize("args, stdin, message", [
    (["-p", "cse,nope", "-"], GRAPH, "python -m tsjit.opt: error: unknown pass 'nope'"),
    ([], None, "python -m tsjit.opt: error: no input"),
    (["-p", "freeze_module", "-"], GRAPH,
     "python -m tsjit.opt: error: unknown pass 'freeze_module': it needs the module object"),
])
def test_usage_errors_show_the_usage_and_exit_2(args, stdin, message):
    result = opt(*args, stdin=stdin)
    assert result.returncode == 2
    usage, error = result.stderr.splitlines()
    assert usage.startswith("usage: python -m tsjit.opt") and error.startswith(message), result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("args, stdin, message", [
    (["-p", "cse", "-"], "graph(%x : Tensor):\n  %y = \n", "tsjit opt: error: cannot parse -: "),
    (["-p", "cse", "/no/such/file.ir"], None, "tsjit opt: error: cannot read /no/such/file.ir: No such file"),
])
def test_bad_input_is_one_message_and_exit_1(args, stdin, message):
    result = tsjit("opt", *args, stdin=stdin)
    assert result.returncode == 1
    assert result.stderr.startswith(message), result.stderr
    assert "Traceback (most recent call last)" not in result.stderr and result.stdout == ""


def test_a_parse_error_points_at_the_text():
    result = tsjit("opt", "-", stdin="graph(%x : Tensor):\n  %y : Tensor = aten::neg(%z)\n  return (%y)\n")
    assert result.returncode == 1
    assert "%z" in result.stderr and "<--- HERE" in result.stderr, result.stderr


def test_the_command_and_the_old_name_agree(graph_file):
    by_command = tsjit("opt", "-p", "cse,dce", graph_file, script=True)
    assert by_command.returncode == 0, by_command.stderr
    assert by_command.stdout == opt("-p", "cse,dce", graph_file).stdout
    listed = tsjit("opt", "--list")
    assert listed.returncode == 0 and listed.stdout == opt("--list").stdout


def test_log_and_limit_apply(graph_file):
    result = opt("-p", "cse", graph_file, TSJIT_LOG_LEVEL=">common_subexpression_elimination",
                 TSJIT_OPT_LIMIT="common_subexpression_elimination=0")
    assert result.returncode == 0
    assert result.stdout.count("aten::add") == 2  # the limiter allowed no rewrite
    assert "[DUMP common_subexpression_elimination] After eliminate_common_subexpression" in result.stderr
