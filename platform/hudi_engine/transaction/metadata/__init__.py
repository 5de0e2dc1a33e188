"""Writing the metadata table: building its partitions (``writer.ensure_metadata``), keeping it in
step with each data instant (``listener.MetadataSync``, through ``writer``'s syncs), the record
index's key changes, and compacting it. Reading it is ``hudi_engine.metadata_table``'s."""
