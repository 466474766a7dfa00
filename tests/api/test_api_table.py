"""docs/torch_jit_api.md's promise: every public name of torch.jit is in tsjit (with the tests that check it
against torch.jit) or is listed with the reason it is not (tests/api/torch_jit_api_table.py)."""

from __future__ import annotations

import torch_jit_api_table as api_table


def test_every_torch_jit_name_is_in_tsjit_or_has_a_reason():
    unaccounted = [name for name in api_table.torch_jit_public_names() if api_table.status(name)[0] == "unaccounted"]
    assert unaccounted == [], "torch.jit names neither in tsjit nor in torch_jit_api_table.py's NOT_API or MISSING"


def test_every_present_name_says_where_it_is_checked():
    present = [name for name in api_table.torch_jit_public_names() if api_table.status(name)[0] == "present"]
    assert [name for name in present if name not in api_table.CHECKED] == []


def test_the_document_has_a_row_per_name():
    document = api_table.DOCUMENT.read_text()
    missing_rows = [name for name in api_table.torch_jit_public_names() if f"| `{name}` |" not in document]
    assert missing_rows == [], "run `python tests/api/torch_jit_api_table.py` to regenerate docs/torch_jit_api.md"


def test_the_document_is_the_table_generated_now():
    """Statuses, reasons and counts too: a name that became present, or a reason reworded, shows up."""
    assert api_table.DOCUMENT.read_text() == api_table.table(), \
        "run `python tests/api/torch_jit_api_table.py` to regenerate docs/torch_jit_api.md"
