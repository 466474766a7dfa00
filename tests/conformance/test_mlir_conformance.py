"""A fixed sample of the MLIR conformance corpus (mlir_runner.py; `make conformance-mlir` runs all of it).

Each sampled program goes through tsjit's route and torch-mlir's FX route to linalg-on-tensors, TOSA and StableHLO,
is compiled by IREE and run against eager. tsjit's outcomes must agree with mlir_conformance_failures.py (an
unexpected pass fails too), and on a program both routes express, tsjit must pass every backend the FX route
passes. The sample covers each corpus: op_db functions (one whose linalg module holds a TMTensor op), torch.nn
modules in evaluation mode, and e2e functions and modules with control flow and submodules.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch_mlir")
pytest.importorskip("iree.compiler")

from mlir_conformance_failures import EXPECTED_FAILURES  # noqa: E402
from mlir_runner import BACKENDS, PASS, check_expectations, expressed, outcome, run_all  # noqa: E402

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
