"""The program a command works on: a TorchScript archive, or `file.py:name` (a function, an nn.Module class or
instance in a Python file, scripted with tsjit.script).

Archives are loaded untrusted unless `--trusted` is given (serialization/untrusted.py: code that reaches files,
processes or the network is refused, naming the member and operator). A Python file is run as `python file.py`
would run it (its directory first on sys.path), so it is as trusted as the user who names it.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from tsjit.api import ScriptFunction, ScriptModule, script
from tsjit.api.archive import load
from tsjit.cli.common import CommandError
from tsjit.ir.graph import Graph


@dataclass
class Program:
    """A compiled function or module, the method a command uses, and the Python original when there is one."""

    label: str
    compiled: Any  # ScriptFunction or ScriptModule
    method_name: str
    original: Any = None  # the Python function or nn.Module instance (None for an archive)

    @property
    def is_module(self) -> bool:
        return isinstance(self.compiled, ScriptModule)

    @property
    def method(self) -> Any:
        """The ScriptFunction, or the module's ScriptMethod named by `--method`."""
        if not self.is_module and self.method_name != "forward":
            raise CommandError(f"{self.label} is a function: --method names a module's method")
        if not self.is_module:
            return self.compiled
        methods = self.compiled._c.type.methods
        if self.method_name not in methods:
            raise CommandError(f"{self.label} has no method {self.method_name!r} (its methods: "
                               f"{', '.join(sorted(methods))})")
        return getattr(self.compiled, self.method_name)

    def __call__(self, *inputs: Any) -> Any:
        return self.method(*inputs)

    def eager(self, *inputs: Any) -> Any:
        """The Python original's result (programs from a Python file only)."""
        function = getattr(self.original, self.method_name) if self.is_module else self.original
        return function(*inputs)

    def plan_graph(self, inputs: tuple[Any, ...]) -> Graph:
        """The graph the executor runs for these inputs: specialized to their types and optimized."""
        return self.method.graph_for(*inputs)


def load_program(text: str, method: str = "forward", trusted: bool = False) -> Program:
    """The program `text` names: `file.py:name`, or else an archive path."""
    path, colon, name = text.rpartition(":")
    if colon and path.endswith(".py"):
        original, compiled = compile_python(python_object(path, name), text)
        return Program(text, compiled, method, original)
    if text.endswith(".py"):
        raise CommandError(f"{text} is a Python file: name the function or module in it, as {text}:name")
    return Program(text, load_archive(text, trusted), method)


def load_archive(path: str, trusted: bool) -> Any:
    if not Path(path).is_file():
        raise CommandError(f"cannot read {path}: no such file")
    return load(path, trusted=trusted)


def python_object(path: str, name: str) -> Any:
    """`name` (dotted for a nested attribute) in the Python file at `path`, run as a module of the file's name."""
    module = import_file(Path(path))
    value: Any = module
    for part in name.split("."):
        if not hasattr(value, part):
            raise CommandError(f"{path} has no {name!r}")
        value = getattr(value, part)
    return value


def import_file(path: Path) -> Any:
    if not path.is_file():
        raise CommandError(f"cannot read {path}: no such file")
    name = path.stem
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() != path.resolve():
        raise CommandError(f"{path}: the module name {name!r} is taken by {loaded.__name__} "
                           f"({getattr(loaded, '__file__', 'built in')}); rename the file")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # classes find their source through their module (inspect.getsource)
    sys.path.insert(0, str(path.resolve().parent))  # its own imports resolve as under `python file.py`
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's file: any exception means it did not run
        raise CommandError(f"running {path} failed: {type(error).__name__}: {error}") from error
    return module


def compile_python(value: Any, label: str) -> tuple[Any, Any]:
    """The Python original (a class built without arguments first) and its scripted form; an object the file
    scripted itself has no original."""
    if isinstance(value, ScriptFunction | ScriptModule):
        return None, value
    if inspect.isclass(value) and issubclass(value, torch.nn.Module):
        try:
            value = value()
        except TypeError as error:
            raise CommandError(f"{label}: cannot build the module without arguments ({error}); name an instance "
                               f"in the file instead") from None
    if not (inspect.isfunction(value) or isinstance(value, torch.nn.Module)):
        raise CommandError(f"{label} is a {type(value).__name__}: expected a function, an nn.Module class or "
                           f"instance")
    return value, script(value)
