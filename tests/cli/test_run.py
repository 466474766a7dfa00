"""`tsjit run`: a program on random inputs of given shapes and dtypes, or on the tensors of a .pt file; exit status
1 and the error's message (no traceback unless --verbose) when the program fails; hostile archives refused."""

from __future__ import annotations

import torch
from cli_programs import lstm_cell, scale
from cli_runner import program, tsjit

from tsjit.cli.inputs import make_inputs


def test_random_inputs_by_shape_and_dtype(tmp_path):
    specs = ["3x10", "(3x20,3x20)", "80x10", "80x20", "80", "80"]
    out = tmp_path / "result.pt"
    result = tsjit("run", program("lstm_cell"), "--inputs", *specs, "--seed", "3", "--out", str(out), script=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""
    hy, cy = torch.load(out)
    expected = lstm_cell(*make_inputs(specs, seed=3))
    assert torch.allclose(hy, expected[0], atol=1e-6) and torch.allclose(cy, expected[1], atol=1e-6)


def test_inputs_from_a_file_and_the_result_printed(tmp_path):
    inputs = (torch.arange(6).reshape(2, 3), 3)
    torch.save(inputs, tmp_path / "inputs.pt")
    result = tsjit("run", program("scale"), "--inputs", str(tmp_path / "inputs.pt"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{scale(*inputs)}\n"


def test_numbers_and_integer_tensors():
    result = tsjit("run", program("scale"), "--inputs", "2x2:int64", "int:3", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{scale(*make_inputs(['2x2:int64', 'int:3'], seed=1))}\n"


def test_a_failing_program_exits_1_with_the_source_line():
    result = tsjit("run", program("mismatched"), "--inputs", "2x3", "2x3")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("tsjit run: error: ")
    assert "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)" in result.stderr
    assert "    return torch.mm(z, y)\n           ~~~~~~~~ <--- HERE" in result.stderr
    assert "Traceback (most recent call last)" not in result.stderr  # no Python traceback
    verbose = tsjit("run", program("mismatched"), "--inputs", "2x3", "2x3", "--verbose")
    assert verbose.returncode == 1 and "Traceback (most recent call last)" in verbose.stderr
    assert verbose.stderr.rstrip().endswith("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")


def test_missing_files_and_bad_specs():
    missing = tsjit("run", "/no/such/model.pt")
    assert missing.returncode == 1
    assert missing.stderr == "tsjit run: error: cannot read /no/such/model.pt: no such file\n"
    bad = tsjit("run", program("scale"), "--inputs", "2x3:float32", "int:three")
    assert bad.returncode == 2
    assert bad.stderr.splitlines()[-1] == "tsjit run: error: argument --inputs: bad input spec 'int:three': " \
                                          "'three' is not an int"


def test_a_hostile_archive_is_refused_and_writes_nothing(hostile_archive, tmp_path):
    """The command loads archives untrusted by default: code reaching outside the program is refused, naming the
    member and the operator; `--trusted` loads it (and its __setstate__ writes its file)."""
    refused = tsjit("run", str(hostile_archive), "--inputs", "2", cwd=tmp_path)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith(f"tsjit run: error: archive '{hostile_archive}' is not trusted")
    assert "code/__torch__.py: __torch__.M.__setstate__ calls aten::save (writes a file)" in refused.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["archive"]
    trusted = tsjit("run", str(hostile_archive), "--inputs", "2", "--trusted", cwd=tmp_path)
    assert trusted.returncode == 0, trusted.stderr
    assert (tmp_path / "pwned").is_file()
