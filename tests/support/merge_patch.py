"""A JSON merge patch (RFC 7386) applied as the API server applies one: how the operator's status and
spec patches land on the stored object in tests that run without the API stand-in."""
from __future__ import annotations

from typing import Any


def apply_merge_patch(obj: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    result = dict(obj) if isinstance(obj, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result
