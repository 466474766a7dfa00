"""Source text and ranges into it: the "where" of every token, tree and node.

A Source is a piece of program text, optionally with the file it came from and the line it starts at. A
SourceRange is a half-open byte span [start, end) of one Source. Errors carry a SourceRange and render it with
`highlight()`, which reproduces TorchScript's error context byte for byte:

    def f(x):
        y = x + 1
        return y + undefined_name
                   ~~~~~~~~~~~~~~ <--- HERE

(up to two lines of context before and after, `~` under every line of the span, and a `  File "name",
line N` header when the source has a file name).
"""

from __future__ import annotations

import bisect

CONTEXT_LINES = 3  # TorchScript's CONTEXT; it counts the highlighted line, so 2 more lines show each side


class Source:
    """Program text plus where it came from.

    `starting_line` is the line number of the text's first line in its file, so ranges report file lines.
    """

    __slots__ = ("text", "filename", "starting_line", "_line_starts")

    def __init__(self, text: str, filename: str | None = None, starting_line: int = 1):
        self.text = text
        self.filename = filename
        self.starting_line = starting_line
        self._line_starts: list[int] | None = None

    def line_index(self, offset: int) -> int:
        """The 0-based index, within this text, of the line holding `offset`."""
        return bisect.bisect_right(self._starts(), offset) - 1

    def line_start(self, line_index: int) -> int:
        """The offset at which the line with 0-based index `line_index` starts."""
        return self._starts()[line_index]

    def _starts(self) -> list[int]:
        """The offset of every line start, computed on first use (most sources never report an error)."""
        if self._line_starts is None:
            self._line_starts = [0] + [i + 1 for i, char in enumerate(self.text) if char == "\n"]
        return self._line_starts

    def __repr__(self) -> str:
        return f"Source({self.filename!r}, starting_line={self.starting_line}, {len(self.text)} chars)"


class SourceRange:
    """The span [start, end) of a Source; equal when they cover the same span of the same Source object."""

    __slots__ = ("source", "start", "end")

    def __init__(self, source: Source, start: int, end: int):
        self.source = source
        self.start = start
        self.end = end

    @property
    def filename(self) -> str | None:
        return self.source.filename

    def text(self) -> str:
        return self.source.text[self.start:self.end]

    def start_line_col(self) -> tuple[int, int]:
        """(line, column) of the start: the line counts from the source's starting_line, the column from 0."""
        index = self.source.line_index(self.start)
        return index + self.source.starting_line, self.start - self.source.line_start(index)

    line_col = start_line_col

    def highlight(self, context: int = CONTEXT_LINES, function_name: str | None = None) -> str:
        """The span in its context with `~` underlining, exactly as TorchScript prints it in errors (a traceback
        frame names its function: `  File "f.py", line 3, in forward`)."""
        text = self.source.text
        if self.end - self.start == len(text):
            return text
        if self.start > len(text):
            return ""
        range_end = min(self.end, len(text))
        begin_context = _context_start(text, _line_begin(text, self.start), context)
        end_context = _context_end(text, _line_end(text, range_end), context)
        out = [self._file_header(function_name), text[begin_context:self.start]]
        line_end = self._underline_lines(out, range_end)
        if line_end <= len(text):
            tail = text[line_end:end_context]
            out.append(tail if not tail or tail.endswith("\n") else tail + "\n")
        return "".join(out)

    def _file_header(self, function_name: str | None) -> str:
        if self.source.filename is None:
            return ""
        line, _ = self.start_line_col()
        where = f", in {function_name}" if function_name else ""
        return f'  File "{self.source.filename}", line {line}{where}\n'

    def _underline_lines(self, out: list[str], range_end: int) -> int:
        """Append each line the span touches, each followed by its `~` line; return the offset after them."""
        text = self.source.text
        line_start = line_end = self.start
        while line_start < range_end:
            line_end = _line_end(text, line_end)
            line = text[line_start:line_end + 1]
            out.append(line if line.endswith("\n") else line + "\n")
            out.append(self._underline(line_start, line_end, range_end))
            line_end += 1
            line_start = line_end
        return line_end

    def _underline(self, line_start: int, line_end: int, range_end: int) -> str:
        """The `~` line under one source line: leading blanks are skipped, the last line says HERE."""
        text = self.source.text
        begin = _line_begin(text, line_start)
        stop = line_start
        while stop < range_end and text[stop] != "\n":
            stop += 1
        blanks = 0
        for i in range(begin, stop):
            if text[i] != " " and i >= self.start:
                break
            blanks += 1
        width = stop - begin - blanks
        if width <= 0:
            return ""
        # C++ reads one past the end here (the string's NUL), which counts as a non-blank character.
        more_lines = any(i >= len(text) or text[i] not in "\n " for i in range(line_end, range_end + 1))
        ending = "\n" if more_lines and line_end != range_end else " <--- HERE\n"
        return " " * blanks + "~" * width + ending

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceRange):
            return NotImplemented
        return self.source is other.source and self.start == other.start and self.end == other.end

    def __hash__(self) -> int:
        return hash((id(self.source), self.start, self.end))

    def __str__(self) -> str:
        return "SourceRange at:\n" + self.highlight()

    def __repr__(self) -> str:
        line, col = self.start_line_col()
        where = f"{self.source.filename}:{line}:{col}" if self.source.filename else f"{line}:{col}"
        return f"SourceRange({where}, {self.text()!r})"


def _line_begin(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _line_end(text: str, offset: int) -> int:
    position = text.find("\n", offset)
    return len(text) if position == -1 else position


def _context_start(text: str, begin_line: int, context: int) -> int:
    """Offset of the start of the `context`-th line above the line starting at begin_line."""
    position, newlines = begin_line, 0
    while position > 0:
        if text[position - 1] == "\n":
            newlines += 1
        if newlines >= context:
            break
        position -= 1
    return position


def _context_end(text: str, end_line: int, context: int) -> int:
    """Offset of the newline ending the `context`-th line below the line ending at end_line."""
    position, newlines = end_line, 0
    while position < len(text):
        if text[position] == "\n":
            newlines += 1
        if newlines >= context:
            break
        position += 1
    return position
