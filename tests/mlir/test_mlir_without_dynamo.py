"""tsjit.mlir.compile never imports torch._dynamo (seconds of CPU, and a module tsjit must not cause to load).

Most of PyTorch's meta kernels are Python, and their type promotion wrapper imports torch._dynamo on its first
call; MLIR's type refinement therefore asks the shape rule tables first (tsjit/mlir/rule_results.py). A fresh
process compiles to linalg-on-tensors a program per family of operators (elementwise, reductions, views, matrix
products, convolution, indexing, loops, transposed operands), the demo's LSTM cell, a sample of op_db's programs
and a few torch.nn modules, and must end without torch._dynamo loaded (dynamo_free_programs.py is the child's
code).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHILD = os.path.join(HERE, "dynamo_free_programs.py")

# op_db programs whose compilation to linalg-on-tensors succeeds, a few of each family
OPDB_SAMPLE = [
    "opdb:add", "opdb:sub", "opdb:mul", "opdb:div.no_rounding_mode", "opdb:sigmoid", "opdb:tanh", "opdb:exp",
    "opdb:log1p", "opdb:pow", "opdb:clamp", "opdb:atan2", "opdb:nn.functional.gelu",
    "opdb:nn.functional.silu", "opdb:sum", "opdb:mean", "opdb:amax", "opdb:var_mean", "opdb:softmax",
    "opdb:log_softmax", "opdb:argmax", "opdb:reshape", "opdb:permute", "opdb:flip", "opdb:diagonal", "opdb:cat",
    "opdb:stack", "opdb:mm", "opdb:bmm", "opdb:addmm", "opdb:matmul", "opdb:nn.functional.linear",
    "opdb:nn.functional.conv2d", "opdb:nn.functional.max_pool2d", "opdb:nn.functional.layer_norm",
    "opdb:index_select", "opdb:gather", "opdb:masked_fill", "opdb:narrow", "opdb:tril", "opdb:isinf", "opdb:cumsum",
    "opdb:nn.functional.glu", "opdb:nn.functional.prelu", "opdb:nn.functional.logsigmoid", "opdb:remainder",
    "opdb:nn.functional.rms_norm", "opdb:dist",
    # operators whose Python meta kernels imported torch._dynamo before they had shape rules, and (cholesky,
    # eigh, lu_solve) elementwise operators and tril on transposed matrices
    "opdb:_softmax_backward_data", "opdb:diag_embed", "opdb:diag", "opdb:fft.fftshift", "opdb:heaviside",
    "opdb:hstack", "opdb:column_stack", "opdb:ldexp", "opdb:logit", "opdb:count_nonzero", "opdb:renorm",
    "opdb:native_batch_norm", "opdb:native_group_norm", "opdb:nn.functional.cross_entropy",
    "opdb:nn.functional.nll_loss", "opdb:nn.functional.mse_loss", "opdb:nn.functional.kl_div",
    "opdb:nn.functional.grid_sample", "opdb:nn.functional.max_unpool3d", "opdb:nn.functional.normalize",
    "opdb:nn.functional.pdist", "opdb:cholesky", "opdb:linalg.eigh", "opdb:linalg.lu_solve", "opdb:linalg.lstsq",
]
# the same, for programs torch-mlir does not lower yet: their types are refined (where torch._dynamo would load)
# before torch-mlir fails
REFINED_ONLY = [
    "opdb:quantile", "opdb:nextafter", "opdb:nn.functional.multi_margin_loss", "opdb:linalg.cond",
    "opdb:linalg.matrix_rank", "opdb:block_diag", "opdb:nn.functional.unfold",
    "opdb:nn.functional.interpolate.trilinear",
]


# torch.nn modules whose attention (scaled_dot_product_attention on permuted queries, keys and values) and
# bidirectional recurrent layer ran meta kernels before they had layout and shape rules
NN_SAMPLE = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
             "TransformerDecoderLayer", "MultiheadAttention", "RNN"]


def _run(*arguments: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, CHILD, *arguments], capture_output=True, text=True, env=env, cwd=ROOT)


def test_compiling_to_linalg_does_not_import_dynamo(tmp_path):
    programs = str(tmp_path / "opdb_programs.pt")
    made = _run("opdb", programs, *OPDB_SAMPLE, *REFINED_ONLY)
    assert made.returncode == 0, made.stderr[-3000:]
    compiled = _run("compile", programs, *NN_SAMPLE)
    assert compiled.returncode == 0, compiled.stderr[-3000:]
    report = json.loads(compiled.stdout.strip().splitlines()[-1])
    failed = {name: outcome for name, outcome in report["outcomes"].items()
              if outcome != "ok" and name not in REFINED_ONLY}
    assert not failed, failed
    assert len(report["outcomes"]) == len(OPDB_SAMPLE) + len(REFINED_ONLY) + len(NN_SAMPLE) + 10  # families, demo
    assert report["first_importer"] is None, f"torch._dynamo was imported compiling {report['first_importer']}"
