"""Regenerate the `.code` goldens: `python tests/serialization/generate_golden_code.py` writes golden_code/<name>.code.

Each file is what torch.jit prints as `.code` for one program of the IR corpus (tests/ir/corpus/programs.py):
functions as `torch.jit.script(fn).code`, modules as their `forward`'s code. The printer test compares
tsjit's printing of the stored corpus graphs with these files, and (when torch.jit is available) the files with
what torch.jit prints right now.
"""

from __future__ import annotations

import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN_DIR = os.path.join(HERE, "golden_code")
CORPUS_DIR = os.path.join(os.path.dirname(HERE), "ir", "corpus")


def corpus_programs():
    """The IR corpus's programs module (its directory must be importable)."""
    if CORPUS_DIR not in sys.path:
        sys.path.insert(0, CORPUS_DIR)
    import programs

    return programs


def torch_code() -> dict[str, str]:
    """name -> torch.jit's `.code` for every scripted function and module of the corpus."""
    import torch

    programs = corpus_programs()
    codes = {fn.__name__: torch.jit.script(fn).code for fn in programs.SCRIPTED_FUNCTIONS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (factory, _, _) in programs.SCRIPTED_MODULES.items():
            codes[name] = torch.jit.script(factory()).code
    return codes


def main() -> None:
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    for name, code in torch_code().items():
        with open(os.path.join(GOLDEN_DIR, f"{name}.code"), "w", encoding="utf-8") as f:
            f.write(code)


if __name__ == "__main__":
    main()
