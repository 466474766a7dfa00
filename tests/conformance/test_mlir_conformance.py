"""A fixed sample of the MLIR conformance corpus (mlir_runner.py; `make conformance-mlir` runs all of it).

Each sampled program goes through tsjit's route and torch-mlir's FX route to linalg-on-tensors, TOSA and StableHLO,
is compiled by IREE and run against eager. tsjit's outcomes must agree with mlir_conformance_failures.py (an
unexpected pass fails too), and on a program both routes express, tsjit must pass every backend the FX route
passes. The sample covers each corpus: op_db functions (one whose linalg module holds a TMTensor op), torch.nn
modules in evaluation mode, and e2e functions and modules with control flow and submodules.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

pytest.importorskip("torch_mlir")
pytest.importorskip("iree.compiler")

from mlir_conformance_failures import EXPECTED_FAILURES  # noqa: E402
from mlir_runner import (  # noqa: E402
    BACKENDS,
    PASS,
    Selection,
    check_expectations,
    expressed,
    outcome,
    run_all,
    table,
)

pytestmark = pytest.mark.filterwarnings("ignore")

SAMPLE = ("opdb:abs", "opdb:cumsum", "opdb:nn.functional.hardswish", "nn:Linear", "nn:LayerNorm",
          "e2e:function:seed_if_else", "e2e:module:linear")


@pytest.fixture(scope="module")
def records() -> dict[str, dict]:
    """The sample's records, from worker processes (torch.export, which the FX route runs, stays out of this one;
    a crash in torch-mlir or IREE fails its program, not the session)."""
    return run_all(list(SAMPLE), jobs=2)


@pytest.mark.parametrize("name", SAMPLE)
def test_sampled_program(name: str, records):
    record = records[name]
    assert record["eager"], f"{name}: eager does not run the program"
    problems = check_expectations({name: record}, EXPECTED_FAILURES)
    assert not problems, "\n".join(problems)
    if expressed(record, "tsjit") and expressed(record, "fx"):
        behind = [b for b in BACKENDS if outcome(record, "fx", b) == PASS and outcome(record, "tsjit", b) != PASS]
        assert not behind, f"the FX route passes {behind} where tsjit does not: {record['outcomes']}"


def test_fx_cache_key_follows_the_program_and_its_data():
    """The FX route's cached outcomes are found again for the same program rebuilt, and not for another program
    or the same module holding other weights."""
    import mlir_programs
    from mlir_runner import fx_cache_key

    def key(name, change=None):
        program = mlir_programs.program(name)
        module = program.build()
        if change:
            change(module)
        return fx_cache_key(program, module)

    assert key("nn:Linear") == key("nn:Linear")
    assert key("nn:Linear") != key("nn:LayerNorm")
    assert key("nn:Linear") != key("nn:Linear", lambda m: m.weight.data.add_(1))


def test_a_json_file_keeps_its_records_and_a_resumed_run_skips_them(tmp_path, capsys):
    """Records accumulate in the --json file across runs; --resume runs only the programs it lacks, and the table
    names the code versions the records mix."""
    from mlir_runner import ROUTES, JSONFile, main

    path = tmp_path / "records.json"
    record = {"name": "nn:Linear", "eager": True, "reproducible": True, "timing": {}, "cpu": 1.0, "commit": "abc",
              "outcomes": {f"{route} {backend}": PASS for route in ROUTES for backend in BACKENDS}}
    path.write_text(json.dumps({"nn:Linear": record}))
    records = JSONFile(path)
    assert records["nn:Linear"] == record
    records["nn:ReLU"] = {**record, "name": "nn:ReLU", "commit": "def"}
    assert set(json.loads(path.read_text())) == {"nn:Linear", "nn:ReLU"}
    assert main(["--corpus", "nn", "--only", "^nn:(Linear|ReLU)$", "--json", str(path), "--resume", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "code versions: abc (1 programs), def (1 programs)" in printed and "covers nn 2/" in printed
    assert "2 programs in" in printed and json.loads(path.read_text())["nn:ReLU"]["commit"] == "def"


def _torch_mlir_dies_lowering_relu_to_tosa() -> None:
    """(Each worker's initializer) torch-mlir's lowering of a module holding a relu to TOSA, which only the FX route
    calls, kills the process as a crash inside torch-mlir would."""
    from torch_mlir import compiler_utils

    lower = compiler_utils.lower_mlir_module

    def dying(verbose, output_type, module, *rest):
        if output_type == compiler_utils.OutputType.TOSA and "torch.aten.relu" in str(module):
            os.kill(os.getpid(), signal.SIGKILL)
        return lower(verbose, output_type, module, *rest)

    compiler_utils.lower_mlir_module = dying


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_crash_in_one_route_keeps_the_outcomes_of_the_others(jobs):
    """A worker that dies in the FX route's TOSA pipeline costs that outcome alone: the record keeps tsjit's
    outcomes and the FX route's on linalg, and names the stage that crashed. With one worker the crash is the
    program's at once; in a pool of two it is once the program runs alone, and the neighbour the broken pool
    killed finishes."""
    records = run_all(["nn:ReLU", "nn:Tanh"], jobs, selection=Selection(backends=("linalg-on-tensors", "tosa")),
                      initializer=_torch_mlir_dies_lowering_relu_to_tosa)
    every = {f"{route} {backend}": PASS for route in ("tsjit", "fx") for backend in ("linalg-on-tensors", "tosa")}
    assert records["nn:ReLU"]["outcomes"] == {
        **every, "fx tosa": "crashed: the worker process died in torch-mlir's tosa pipeline"}
    assert records["nn:Tanh"]["outcomes"] == every
    assert "failure" not in records["nn:ReLU"] and "failure" not in records["nn:Tanh"]
    # the CPU seconds of the attempt that crashed count too (tsjit's route ran before the FX route crashed)
    assert records["nn:ReLU"]["cpu"] >= records["nn:ReLU"]["timing"]["tsjit"]["lower"]


def _made_up(name: str, outcomes: dict[str, str], timing: dict, **more) -> dict:
    return {"name": name, "eager": True, "reproducible": True, "outcomes": outcomes, "timing": timing, "cpu": 2.0,
            "commit": "abc", **more}


def test_the_table_counts_each_route_and_prints_the_compile_cost_side_by_side():
    """The table from records alone: passes per route and backend on the programs both routes express and on all,
    and the compile cost, the median per program of lowering and IREE compilation, tsjit's route beside the FX
    route's, over the programs each lowered and over those both lowered."""
    every = {f"{route} {backend}": PASS for route in ("tsjit", "fx") for backend in BACKENDS}
    records = {
        "opdb:a": _made_up("opdb:a", every, {"tsjit": {"lower": 1.0, "iree": 4.0}, "fx": {"lower": 0.5, "iree": 3.0}}),
        "opdb:b": _made_up("opdb:b", {**every, "tsjit tosa": "convert-torch-to-tosa: torch.aten.foo"},
                           {"tsjit": {"lower": 3.0, "iree": 2.0}, "fx": {"lower": 1.5, "iree": 1.0}}),
        "nn:c": _made_up("nn:c", {**every, **{f"fx {b}": "not expressed: no export" for b in BACKENDS}},
                         {"tsjit": {"lower": 2.0}}),
    }
    lines = table(records).splitlines()
    assert lines[0].split() == ["corpus", "backend", "both", "tsjit", "fx", "all", "tsjit", "fx"]
    assert lines[1].split() == ["all", "linalg-on-tensors", "2", "2", "2", "3", "3", "2"]
    assert lines[2].split() == ["all", "tosa", "2", "1", "2", "3", "2", "2"]
    assert ["nn", "stablehlo", "0", "0", "0", "1", "1", "0"] in [line.split() for line in lines]
    assert any(line.startswith("linalg-on-tensors (tsjit): 2 / 2 op_db functions") for line in lines)
    cost = lines[lines.index(next(line for line in lines if line.startswith("route"))):]
    assert cost[1].split() == ["tsjit", "3", "2.00", "2.00"]  # medians of (1, 3, 2) and (4, 2, 0)
    assert cost[2].split() == ["fx", "2", "1.00", "2.00"]
    assert cost[3].split() == ["tsjit", "(both", "lowered)", "2", "2.00", "3.00"]
    assert cost[4].split() == ["fx", "(both", "lowered)", "2", "1.00", "2.00"]


def test_the_table_shows_only_the_routes_and_backends_that_ran():
    records = {"opdb:a": _made_up("opdb:a", {"tsjit linalg-on-tensors": PASS}, {"tsjit": {"lower": 1.0}},
                                  routes=["tsjit"], backends=["linalg-on-tensors"]),
               "opdb:b": _made_up("opdb:b", {"tsjit linalg-on-tensors": "mismatch: result: wrong values"},
                                  {"tsjit": {"lower": 1.0}}, routes=["tsjit"], backends=["linalg-on-tensors"])}
    text = table(records)
    lines = text.splitlines()
    assert lines[0].split() == ["corpus", "backend", "all", "tsjit"]
    assert lines[1].split() == ["all", "linalg-on-tensors", "2", "1"]
    assert "tosa" not in text and "stablehlo" not in text and "fx" not in text.split("compile cost")[1]
    assert "linalg-on-tensors (tsjit): 1 / 2 op_db functions" in text
    assert check_expectations(records, {("opdb:b", "linalg-on-tensors"): "mismatch"}) == []
