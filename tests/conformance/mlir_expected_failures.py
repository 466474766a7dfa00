"""tsjit's failures on the MLIR conformance corpus (mlir_runner.py), per (program, backend), with what stops each.

A failure in a torch-mlir pipeline is recorded as `pass: op`, the torch-mlir pass that failed (found by running the
pipeline's passes one at a time) and the op it stopped on; other failures by their error's first line (the front
end refusing the program, IREE, a mismatch with eager). `python tests/conformance/mlir_runner.py --write-expected`
rewrites the entries of the programs it ran; the runner fails on an unexpected failure and an unexpected pass.
"""

EXPECTED_FAILURES: dict[tuple[str, str], str] = {
}
