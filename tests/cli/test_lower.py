"""`tsjit lower`: MLIR printed or written, and run on IREE against eager (torch-mlir and IREE: the mlir extra)."""

from __future__ import annotations

from cli_runner import program, tsjit


def test_the_torch_backend_contract_is_printed():
    result = tsjit("lower", program("scale"), "--to", "torch", "--inputs", "2x3", "int:2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("module") and "func.func @forward(" in result.stdout
    assert "!torch.vtensor<[2,3],f32>" in result.stdout and "torch.aten.mul" in result.stdout
    assert result.stderr == ""


def test_linalg_written_to_a_file_and_run_on_iree_against_eager(tmp_path):
    out = tmp_path / "net.mlir"
    result = tsjit("lower", program("Net"), "--to", "linalg", "--inputs", "4x3", "-o", str(out), "--run",
                   script=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("IREE's result matches eager: largest difference ")
    text = out.read_text()
    assert "linalg.matmul" in text or "linalg.generic" in text
    assert "torch." not in text.replace("torch.vtensor", "")  # nothing of the torch dialect is left


def test_usage_errors():
    result = tsjit("lower", program("Net"), "--to", "spirv")
    assert result.returncode == 2 and "argument --to: invalid choice: 'spirv'" in result.stderr
