"""Exactly-once micro-batches for ``df.writeStream.format("hudi")``, kept as Hudi's
HoodieStreamingSink keeps them: each micro-batch's commit records ``{"<identifier>": "<batch id>"}``
under ``_hudi_streaming_sink_checkpoint`` in its extra metadata, the identifier being
``hoodie.datasource.write.streaming.checkpoint.identifier``. Spark replays a batch whose commit
landed in the table before Spark's own checkpoint recorded it (a crash between the two); the table
already holding that batch id for the identifier, the replay commits nothing.

The commit also records the Spark query's id (from its checkpoint folder). Batch ids start again at
0 in a new checkpoint, so a batch id at or below the table's from another query is no replay:
Hudi's sink would skip it silently, this one refuses it.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Mapping

from .. import config as C
from ..config import HoodieConfig
from ..errors import HoodieConfigError
from ..storage import Storage
from ..table.meta_client import HoodieTable

log = logging.getLogger(__name__)

SINK_CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"      # Hudi's HoodieStreamingSink.SINK_CHECKPOINT_KEY
QUERY_ID_KEY = "_hudi_streaming_sink_query_id"
CHECKPOINT_LOCATION = "checkpointlocation"      # the writeStream option, as Spark hands it over


@dataclass(frozen=True)
class SinkBatch:
    identifier: str
    batch_id: int
    query_id: str | None       # None when Spark took the location from spark.sql.streaming.checkpointLocation

    @classmethod
    def of(cls, options: Mapping[str, str], batch_id: int) -> "SinkBatch":
        return cls(HoodieConfig(options).get_str(C.STREAMING_CHECKPOINT_IDENTIFIER), batch_id, _query_id(options))

    def metadata(self) -> dict[str, str]:
        """The commit's extra metadata; the checkpoint as Hudi's Jackson writes it."""
        checkpoint = {SINK_CHECKPOINT_KEY: json.dumps({self.identifier: str(self.batch_id)}, separators=(",", ":"))}
        return {**checkpoint, QUERY_ID_KEY: self.query_id} if self.query_id else checkpoint

    def committed_in(self, table: HoodieTable) -> str | None:
        """The instant whose commit holds this batch already (Spark replays it); None for a new batch."""
        last = _last_checkpoint(table, self.identifier)
        if last is None or last[1] < self.batch_id:
            return None
        instant, batch_id, query_id = last
        if query_id and self.query_id and query_id != self.query_id:
            raise HoodieConfigError(
                f"{table.storage.base_uri}: commit {instant} holds micro-batch {batch_id} of streaming query "
                f"{query_id} under {C.STREAMING_CHECKPOINT_IDENTIFIER.key}={self.identifier}, and this query "
                f"({self.query_id}, another checkpoint) is at batch {self.batch_id}: not a replay. Give each query "
                f"that writes the table its own {C.STREAMING_CHECKPOINT_IDENTIFIER.key}")
        return instant


def _last_checkpoint(table: HoodieTable, identifier: str) -> tuple[str, int, str | None] | None:
    """(instant, batch id, query id) of the newest completed write holding a batch for ``identifier``."""
    timeline = table.timeline
    for instant in reversed(timeline.completed_writes()):
        extra = timeline.commit_metadata(instant).get("extraMetadata") or {}
        batches = json.loads(extra.get(SINK_CHECKPOINT_KEY) or "{}")
        if identifier in batches:
            return instant.timestamp, int(batches[identifier]), extra.get(QUERY_ID_KEY)
    return None


def _query_id(options: Mapping[str, str]) -> str | None:
    """The id Spark keeps in the checkpoint folder's ``metadata`` file, the same across restarts."""
    location = options.get(CHECKPOINT_LOCATION)
    if not location:
        return None
    try:
        return json.loads(Storage(location, options).read_text("metadata").splitlines()[0])["id"]
    except (OSError, ValueError, KeyError, IndexError) as e:
        log.warning("no streaming query id in %s/metadata (%s): the commit records the batch id only", location, e)
        return None
