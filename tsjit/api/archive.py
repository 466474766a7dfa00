"""`tsjit.save` and `tsjit.load`: TorchScript archives, as torch.jit.save and torch.jit.load write and read them.

serialization/ does the work (serializer.py, deserializer.py); what a user gets back from `load` is a
RecursiveScriptModule, which only the api builds, so the user-facing pair lives here and serialization never
imports the api.
"""

from __future__ import annotations

import os
from typing import Any, BinaryIO

import torch

from tsjit.api.module import wrap_module
from tsjit.serialization import deserializer, serializer
from tsjit.serialization.archive_reader import DEFAULT_LIMITS, ArchiveLimits


def save(module: Any, path_or_file: str | os.PathLike | BinaryIO, _extra_files: dict[str, Any] | None = None
         ) -> None:
    """Save a scripted module (or function) as a TorchScript archive; see serialization/serializer.py."""
    serializer.save(module, path_or_file, _extra_files)


def load(path_or_file: str | os.PathLike | BinaryIO | bytes, _extra_files: dict[str, Any] | None = None,
         map_location: str | torch.device | None = None, _limits: ArchiveLimits = DEFAULT_LIMITS,
         trusted: bool = True) -> Any:
    """Load a TorchScript archive written by tsjit.save or torch.jit.save; see serialization/deserializer.py.
    Pass `trusted=False` for an archive from a source you do not trust (serialization/untrusted.py, and the
    README's threat model)."""
    root, class_hooks = deserializer.load(path_or_file, _extra_files, map_location, _limits, trusted)
    return wrap_module(root, class_hooks)
