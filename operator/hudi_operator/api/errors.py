"""The one error a bad resource raises, naming the field so the fix is obvious."""
from __future__ import annotations


class SpecError(ValueError):
    """A resource the API would refuse: ``path`` is the field (``spec.source.kafka.topic``),
    ``message`` says what is wrong and what to do."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
