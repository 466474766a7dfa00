"""Code written the way libraries ship it (a package on sys.path), scripted and traced as users do:

- classes of a package whose name begins with "torch" (torchvision's ImageList) are script classes: only
  `torch` itself and `torch.*` are PyTorch's own;
- a helper behind a decorator (`functools.wraps`, `@torch.jit._script_if_tracing`, `@tsjit.script_if_tracing`)
  is compiled against its own globals and closure, not the decorator's;
- `torch.jit.is_tracing()` and `torch._C._get_tracing_state()` answer yes inside `tsjit.trace`, so library code
  that takes a shortcut when not tracing is traced along its general path."""

from __future__ import annotations

import threading
import warnings

import pytest
import torch
from library_package import import_library

import tsjit
from tsjit.frontend import tracer
from tsjit.frontend.resolver import in_package
from tsjit.frontend.script_class import is_script_class_candidate
from tsjit.frontend.tracer import TracerWarning

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own

IMAGE_LIST = """
    from typing import List, Tuple

    import torch
    from torch import Tensor


    class ImageList:
        def __init__(self, tensors: Tensor, image_sizes: List[Tuple[int, int]]):
            self.tensors = tensors
            self.image_sizes = image_sizes

        def scaled(self, factor: float) -> "ImageList":
            return ImageList(self.tensors * factor, self.image_sizes)


    def batch(images: List[Tensor]) -> ImageList:
        sizes = [(int(image.shape[-2]), int(image.shape[-1])) for image in images]
        return ImageList(torch.stack(images), sizes)


    class Transform(torch.nn.Module):
        def forward(self, images: List[Tensor]) -> Tuple[Tensor, List[Tuple[int, int]]]:
            batched = batch(images).scaled(2.0)
            return batched.tensors, batched.image_sizes
"""


# ---- packages named torch* -----------------------------------------------------------------------------------
def test_in_package_is_by_package_not_by_prefix():
    assert in_package("torch", "torch") and in_package("torch.nn.functional", "torch")
    assert not in_package("torchvision", "torch") and not in_package("torchaudio.models", "torch")
    assert in_package("tsjit.api", "torch.jit", "tsjit") and not in_package("tsjit_extras", "tsjit")


def test_classes_of_a_torch_named_package_are_script_classes(tmp_path, monkeypatch):
    library = import_library(tmp_path, monkeypatch, "torchimagelist", IMAGE_LIST)
    assert is_script_class_candidate(library.ImageList)
    assert not is_script_class_candidate(torch.nn.Linear) and not is_script_class_candidate(torch.Size)
    images = [torch.randn(2, 3), torch.randn(2, 3)]
    expected = library.Transform()(images)
    result = tsjit.script(library.Transform())(images)
    torch.testing.assert_close(result[0], expected[0])
    assert result[1] == expected[1] == [(2, 3), (2, 3)]


def test_tracer_warnings_of_torch_named_packages_are_not_hidden():
    """TracerWarning.ignore_lib_warnings hides warnings raised inside torch's modules, not torchvision's."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        TracerWarning.ignore_lib_warnings()
        for module in ("torch.nn.functional", "torchimagelist", "torch.jit._trace"):
            warnings.warn_explicit(f"from {module}", TracerWarning, "library.py", 1, module=module)
    assert [str(w.message) for w in caught] == ["from torchimagelist", "from torch.jit._trace"]


def test_code_of_a_tsjit_named_package_is_not_tsjit_s_own():
    """Warnings raised outside the traced code point at the first frame outside tsjit's directory: a sibling
    package `tsjit_extras` is user code."""
    code = compile("def call(function):\n    return function()\n", tracer._PACKAGE + "_extras/helpers.py", "exec")
    namespace: dict = {}
    exec(code, namespace)
    assert namespace["call"](tracer._caller_of_tsjit).f_code.co_filename == tracer._PACKAGE + "_extras/helpers.py"


# ---- decorated helpers -----------------------------------------------------------------------------------------
DECORATED = """
    import functools

    import torch
    from torch import Tensor

    import tsjit


    def _double(x: Tensor) -> Tensor:
        return x * 2


    def logged(fn):
        calls = []

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            calls.append(fn.__name__)
            return fn(*args, **kwargs)

        return wrapper


    def _make_offset():
        def three(x: Tensor) -> Tensor:
            return x + 3.0

        @logged
        def add_offset(x: Tensor) -> Tensor:
            return three(x)   # a closure variable of the wrapped function, not of the wrapper

        return add_offset


    add_offset = _make_offset()


    @torch.jit._script_if_tracing
    def repeated(x: Tensor, n: int) -> Tensor:
        for _ in range(n):
            x = _double(x)
        return x


    @tsjit.script_if_tracing
    def row_sums(x: Tensor) -> Tensor:
        rows = []
        for i in range(x.size(0)):   # a loop over a size: kept as a loop only if compiled
            rows.append(x[i].sum())
        return torch.stack(rows)


    def user(x: Tensor) -> Tensor:
        return add_offset(repeated(x, 2)) - 1


    def summed(x: Tensor) -> Tensor:
        return row_sums(x) * 2
"""


def test_decorated_helpers_are_compiled_in_their_own_globals(tmp_path, monkeypatch):
    library = import_library(tmp_path, monkeypatch, "decoratedlib", DECORATED)
    x = torch.randn(4)
    torch.testing.assert_close(tsjit.script(library.user)(x), library.user(x))
    torch.testing.assert_close(tsjit.script(library.add_offset)(x), x + 3)
    jit = pytest.importorskip("torch.jit")
    scripted = tsjit.script(library.repeated)
    torch.testing.assert_close(scripted(x, 3), jit.script(library.repeated)(x, 3))


def test_script_if_tracing_records_a_call_keeping_control_flow(tmp_path, monkeypatch):
    library = import_library(tmp_path, monkeypatch, "decoratedlib", DECORATED)
    x = torch.randn(3, 4)
    torch.testing.assert_close(library.summed(x), x.sum(1) * 2)  # eager: the helper runs as Python
    traced = tsjit.trace(library.summed, (x,))
    assert "prim::CallFunction" in str(traced.graph)
    other = torch.randn(5, 4)
    torch.testing.assert_close(traced(other), library.summed(other))
    torch.testing.assert_close(tsjit.script(library.summed)(other), library.summed(other))


def test_torch_script_if_tracing_helper_is_traced_not_baked_in(tmp_path, monkeypatch):
    """Inside tsjit.trace, torch.jit's wrapper runs its helper as Python (recorded), never torch.jit.script."""
    library = import_library(tmp_path, monkeypatch, "decoratedlib", DECORATED)
    traced = tsjit.trace(library.user, (torch.randn(4),))
    other = torch.randn(4)
    torch.testing.assert_close(traced(other), library.user(other))


# ---- torch.jit.is_tracing() inside tsjit.trace -----------------------------------------------------------------
SHORTCUTS = """
    import torch
    from torch import Tensor
    from torch.jit import is_tracing


    def first_half(x: Tensor) -> Tensor:
        if not torch.jit.is_tracing():
            return x[:2]   # a shortcut that is right only for the size seen when tracing
        return x[: x.size(0) // 2]


    def first_half_imported(x: Tensor) -> Tensor:
        if not is_tracing():
            return x[:2]
        return x[: x.size(0) // 2]


    def scaled_rows(x: Tensor) -> Tensor:
        rows = x.size(0)
        if torch._C._get_tracing_state():
            return x * x.new_ones(()).mul(rows)   # the size stays data in a trace
        return x * rows


    def model(x: Tensor) -> Tensor:
        return first_half(x) + first_half_imported(x) + scaled_rows(x)[: x.size(0) // 2]
"""


@pytest.mark.parametrize("name", ["first_half", "first_half_imported", "model"])
def test_trace_records_the_general_path(tmp_path, monkeypatch, name):
    library = import_library(tmp_path, monkeypatch, "shortcutlib", SHORTCUTS)
    function = getattr(library, name)
    traced = tsjit.trace(function, (torch.arange(4.0),))
    for size in (4, 8, 10):
        x = torch.randn(size)
        expected = x[: size // 2] if name != "model" else 2 * x[: size // 2] + (x * size)[: size // 2]
        torch.testing.assert_close(traced(x), expected)
    assert not torch.jit.is_tracing() and torch._C._get_tracing_state() is None


def test_torch_bindings_are_restored_after_a_failed_trace():
    is_tracing, get_tracing_state = torch._C._is_tracing, torch._C._get_tracing_state

    def fails(x):
        assert torch._C._is_tracing is not is_tracing   # replaced while tsjit traces
        raise ValueError("inside the trace")

    with pytest.raises(ValueError, match="inside the trace"):
        tsjit.trace(fails, (torch.ones(2),))
    assert torch._C._is_tracing is is_tracing and torch._C._get_tracing_state is get_tracing_state


def test_tracing_answers_only_on_the_tracing_thread():
    entered, release = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def slow(x):
        seen["inside"] = torch.jit.is_tracing() and tsjit.is_tracing()
        entered.set()
        release.wait(10)
        return x + 1

    worker = threading.Thread(target=lambda: tsjit.trace(slow, (torch.ones(2),), check_trace=False))
    worker.start()
    assert entered.wait(10)
    seen["other thread"] = torch.jit.is_tracing() or tsjit.is_tracing() or bool(torch._C._get_tracing_state())
    release.set()
    worker.join(10)
    assert seen == {"inside": True, "other thread": False}
    assert not tsjit.is_tracing() and not tsjit.is_scripting()


def _torch_flags(x: torch.Tensor) -> torch.Tensor:
    if torch.jit.is_tracing():
        return x + 1
    if torch.jit.is_scripting():
        return x + 2
    return x


def _tsjit_flags(x: torch.Tensor) -> torch.Tensor:
    if tsjit.is_tracing():
        return x + 1
    if tsjit.is_scripting():
        return x + 2
    return x


def test_scripted_code_is_not_tracing_and_is_scripting():
    x = torch.zeros(1)
    torch.testing.assert_close(tsjit.script(_torch_flags)(x), x + 2)
    torch.testing.assert_close(tsjit.script(_tsjit_flags)(x), x + 2)
    torch.testing.assert_close(_tsjit_flags(x), x)
    jit = pytest.importorskip("torch.jit")
    torch.testing.assert_close(jit.script(_torch_flags)(x), x + 2)
