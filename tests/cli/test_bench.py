"""`tsjit bench`: the repository's benchmarks, with python -m bench's arguments passed on."""

from __future__ import annotations

from cli_runner import tsjit


def test_one_benchmark_runs_with_its_arguments_passed_on():
    result = tsjit("bench", "--only", "pointwise", "--rounds", "1", "--no-compile", script=True)
    assert result.returncode == 0, result.stderr
    assert "pointwise on 8 elements: 5 elementwise ops" in result.stdout
    rows = [line.split()[0] for line in result.stdout.splitlines()[-3:]]
    assert rows == ["eager", "torch.jit", "tsjit"]


def test_an_unknown_benchmark_is_a_usage_error():
    result = tsjit("bench", "--only", "nothing")
    assert result.returncode == 2 and "argument --only: invalid choice: 'nothing'" in result.stderr
