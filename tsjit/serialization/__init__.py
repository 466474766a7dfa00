"""Saving programs: TorchScript source and TorchScript archives (jit-overview.md "Python Printer", "Saving Programs").

    python_printer.py      Graph / function -> TorchScript source (`.code`, the bodies in the archive's code/ files)
    constant_printer.py    constants as literals, or as entries of the constant table (`CONSTANTS.c0`)
    named_type_printer.py  classes, named tuples, enums, interfaces as the archive's code/ files hold them
    pickler.py             values -> protocol-2 pickles in torch's dialect (data.pkl, constants.pkl)
    unpickler.py           the restricted reader of those pickles: an opcode interpreter that imports nothing
    archive_writer.py      the zip layout torch.jit.save writes
    archive_reader.py      reading untrusted zips: names, sizes, zip bombs, corruption
    serializer.py          save(): module object -> data.pkl + code/ + constants.pkl + version
    source_importer.py     code/ files -> classes and functions, compiled by the frontend with the archive's names
    upgraders.py           old operator behaviour for archives older than an operator change
    value_types.py         attribute values checked against their declared types (linear in the pickle)
    untrusted.py           load(f, trusted=False): outside-world operators refused, __setstate__ under a step budget
    deserializer.py        load(): archive -> runnable module object

`tsjit.save` and `tsjit.load` (tsjit/api/archive.py: load returns a RecursiveScriptModule, which only the api
builds) behave like torch.jit.save and torch.jit.load, and each reads what the other writes.
"""

from __future__ import annotations

from typing import Any


def function_code(function: Any) -> str:
    """`.code` of a function: its TorchScript source, as torch.jit prints it."""
    # deferred: every serialization module imports this package first; the printer is large
    from tsjit.serialization.python_printer import PythonPrinter

    printer = PythonPrinter()
    printer.print_function(function)
    return printer.text()


def method_code(method: Any) -> str:
    """`.code` of a method (and of a module: its `forward`): `self` is printed without its type."""
    # deferred: every serialization module imports this package first; the printer is large
    from tsjit.serialization.python_printer import PythonPrinter

    printer = PythonPrinter()
    printer.print_method(method)
    return printer.text()


def method_code_with_constants(method: Any) -> tuple[str, list[Any]]:
    """`.code` of a method and its constant table: the values the code names `CONSTANTS.c<i>`, by index."""
    # deferred: every serialization module imports this package first; the printer is large
    from tsjit.serialization.python_printer import PythonPrinter

    printer = PythonPrinter()
    printer.print_method(method)
    return printer.text(), list(printer.constant_table)


__all__ = ["function_code", "method_code", "method_code_with_constants"]
