"""A recorded model call's prompt as text, for tests that check what a prompt held.

Call records keep the template's kind, version and inputs, not the rendered text (``npcworld why`` renders
it again the same way), so a test renders it again too.
"""

from __future__ import annotations

import json
from typing import Any

from npcworld.llm.prompts import render_recorded

__all__ = ["RECORD_COLUMNS", "prompt_text"]

# The llm_calls columns ``prompt_text`` reads, in its argument order.
RECORD_COLUMNS = "prompt_kind, template_version, inputs"


def prompt_text(kind: str, version: int, inputs: Any) -> str:
    """The call's messages as JSON text (what ``request::text`` used to hold); fails when they cannot be
    rendered again, so a check on the text never passes on nothing."""
    messages = render_recorded(kind, version, inputs)
    assert messages is not None, f"the {kind} v{version} call's prompt cannot be rendered from its record"
    return json.dumps(messages, ensure_ascii=False)
