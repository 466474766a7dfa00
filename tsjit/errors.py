"""The exceptions tsjit raises to its users.

Every error a user can cause is one of these types, so callers can catch tsjit's errors without catching
internal bugs. Errors that point into source text carry a SourceRange and render the offending line with
`~~~~ <--- HERE` underneath (see tsjit.source.source_range.SourceRange.highlight).
"""

from __future__ import annotations


class TsjitError(RuntimeError):
    """Base class of every error tsjit raises on bad input.

    A RuntimeError, as torch.jit's compile, schema, IR and archive errors are: code written against torch.jit
    (`try: torch.jit.script(f) except RuntimeError: use f`) keeps working with tsjit."""


class IRError(TsjitError):
    """A graph breaks an invariant of the IR (raised by Graph.lint and by graph-manipulation methods)."""


class SchemaError(TsjitError):
    """A FunctionSchema string is malformed, or no overload of an operator matches the arguments."""


class ParseError(TsjitError):
    """Text (IR, schema or source) could not be parsed; the message gives line and column."""


class FrontendError(TsjitError):
    """A TorchScript program is rejected by the lexer, parser or IR emitter."""


class RuntimeTsjitError(TsjitError):
    """A graph failed while running (raised by the interpreter around the failing node)."""


class SerializationError(TsjitError):
    """An archive could not be read or written; the message names the archive member."""


class NotAnArchiveError(SerializationError):
    """`tsjit.load` was given a file that is not a TorchScript archive but something else it can name (a file of
    torch.save: a state_dict, tensors, a pickled module); the message says what to load it with instead."""


class MLIRError(TsjitError):
    """A program could not be imported into, lowered through, or run from MLIR."""


class GraphvizError(TsjitError):
    """A graph could not be drawn: Graphviz's `dot` is missing or failed (the message says which)."""


class ErrorWithSourceRange(TsjitError):
    """Mixin behaviour for errors that point into source: the message ends with the highlighted range."""

    def __init__(self, message: str, source_range=None):
        self.message = message
        self.source_range = source_range
        super().__init__(self._render())

    def _render(self) -> str:
        if self.source_range is None:
            return self.message
        return f"{self.message}:\n{self.source_range.highlight()}"


class SourceParseError(ErrorWithSourceRange, ParseError):
    """A parse error at a place in source text."""


class CompileError(ErrorWithSourceRange, FrontendError):
    """A TorchScript compilation error at a place in source text."""


# torch.jit's names: `torch.jit.Error` is what a failing TorchScript program raises (`raise`, `assert`, an
# operator's error), which for tsjit is RuntimeTsjitError.
Error = RuntimeTsjitError


class ScriptWarning(Warning):
    """A warning about how TorchScript features are used (torch.jit.ScriptWarning), such as strict_fusion
    outside scripted code."""
