"""Merge rules: how incoming and stored records of one key combine (ordering, deletes, payloads).

Owned by neither the reader nor the writer: a snapshot read merging log blocks, a compaction and an
upsert all merge by these rules, so they agree on which version of a record wins.
"""
