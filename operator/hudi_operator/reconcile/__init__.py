"""Pure reconcile logic: from what the operator observed (specs, live objects, a table's timeline,
the clock) to the actions it takes and the status it writes. No I/O here, so every decision is
tested directly; ``hudi_operator.handlers`` only reads the world and applies the results."""
from __future__ import annotations
