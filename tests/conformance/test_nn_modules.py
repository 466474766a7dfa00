"""Every public nn.Module class of torch.nn, as a corpus: one instance per class (nn_module_table.py), in training
and evaluation mode, through scripting, tracing and archives (nn_module_paths.py), by tsjit and by torch.jit.

- The table is complete: every class torch.nn exports has an entry or a written reason why it cannot run.
- Every class torch.jit scripts, tsjit scripts too, and every tsjit path matches eager (results and the buffers a
  training-mode call updates), unless KNOWN_FAILURES says why not (strict: a path listed there must fail).
- Every class torch.jit does not script is listed in TORCH_JIT_FAILURES with torch.jit's error (strict too); on
  those, tsjit either matches eager or refuses with a typed TsjitError.
The conftest prints the pass counts per path, tsjit beside torch.jit, at the end of the run.
"""

from __future__ import annotations

import pytest
from nn_module_paths import MODES, PASS, PATHS, outcomes
from nn_module_table import ENTRIES, NOT_RUNNABLE, nn_module_classes
from torch import nn

import tsjit

pytestmark = pytest.mark.filterwarnings("ignore")

# (class, path) -> why tsjit still fails that path on a class torch.jit scripts
KNOWN_FAILURES: dict[tuple[str, str], str] = {}

# class -> torch.jit.script's error on it in a fresh process (after other classes compiled, torch.jit may fail
# differently: "Expected inferred type to be interface type", "Can't redefine method"), so only the failure is checked
TORCH_JIT_FAILURES: dict[str, str] = {
    "AdaptiveAvgPool2d": "RuntimeError: adaptive_avg_pool2d(Tensor input, int[2] output_size)",  # (3, None)
    "AdaptiveLogSoftmaxWithLoss": "ValueError: Unknown type annotation",  # ModuleList indexed by a variable
    "DataParallel": "NotSupportedError: Compiled functions can't take variable number of arguments",
    "GaussianNLLLoss": "NotSupportedError: Comprehension ifs are not supported yet",
    "LinearCrossEntropyLoss": "OSError: Failed to get source for <function LinearCrossEntropyOptions.__init__",
    "MaxUnpool1d": "RuntimeError: isIntList() INTERNAL ASSERT FAILED",  # kernel_size: Union[Tuple[int], int]
    "MaxUnpool2d": "RuntimeError: isIntList() INTERNAL ASSERT FAILED",
    "MaxUnpool3d": "RuntimeError: isIntList() INTERNAL ASSERT FAILED",
    "SyncBatchNorm": "RuntimeError: attribute lookup is not defined on python value of type 'module'",
    "TripletMarginWithDistanceLoss": "NotSupportedError: Compiled functions can't take variable number of arguments",
    **{name: f"RuntimeError: '{getattr(nn, name).__module__}.{name}' has uninitialized parameters"
       for name in ENTRIES if name.startswith("Lazy")},  # a lazy module is scripted after its first call
}


def subclass_names(error: type) -> tuple[str, ...]:
    return (error.__name__, *(name for child in error.__subclasses__() for name in subclass_names(child)))


TSJIT_ERRORS = tuple(f"{name}:" for name in subclass_names(tsjit.TsjitError))


def test_every_class_has_an_entry_or_a_reason():
    missing = [name for name in nn_module_classes() if name not in ENTRIES and name not in NOT_RUNNABLE]
    assert not missing, f"add these torch.nn classes to nn_module_table.py: {missing}"
    stale = sorted((set(ENTRIES) | set(NOT_RUNNABLE)) - set(nn_module_classes()))
    assert not stale, f"no longer in torch.nn: {stale}"


# the torch.jit outcome that says whether a tsjit path is required to pass: tsjit does at least what torch.jit does
# (tracing reproduces eager only where nothing data-dependent is baked in; archives only hold modules that call no
# Python, for both alike)
ORACLE_PATH = {"script": "script", "trace": "trace", "save->load": "save->load", "tsjit->torch": "save->load",
               "torch->tsjit": "save->load"}


def failures(name: str, ours: dict[str, str], theirs: dict[str, str]) -> dict[str, str]:
    """The tsjit paths that fail where torch.jit's passes and KNOWN_FAILURES does not say why; a path listed there
    must still fail (else the list is stale)."""
    found = {}
    for path in PATHS:
        reason = KNOWN_FAILURES.get((name, path))
        if reason is not None:
            assert ours[path] != PASS, f"{name} {path} passes now: remove it from KNOWN_FAILURES ({reason})"
        elif ours[path] != PASS and theirs[ORACLE_PATH[path]] == PASS:
            found[path] = ours[path]
    return found


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_module_class(name: str, mode: str):
    result = outcomes(name)[mode]
    ours, theirs = result["tsjit"], result["torch.jit"]
    if name in TORCH_JIT_FAILURES:
        assert theirs["script"] != PASS, f"torch.jit scripts {name} now: remove it from TORCH_JIT_FAILURES"
        assert ours["script"] == PASS or ours["script"].startswith(TSJIT_ERRORS), ours["script"]
        assert ours["script"] != PASS or ours["save->load"] == PASS, ours["save->load"]
        return
    assert theirs["script"] == PASS, f"torch.jit: {theirs['script']}; if torch.jit cannot script the class, list it"
    assert not failures(name, ours, theirs)
