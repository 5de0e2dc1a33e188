"""The one commit path every action on a table takes (see ``platform/hudi_engine/README.md``).

``transaction.Transaction``: begin (instant time, heartbeat, lock with several writers), conflict
checks, commit and abort. ``commit.complete``: the only function that completes an instant.
``recovery``: rollbacks with the metadata table in step; ``restore``: back to a savepoint;
``metadata``: the metadata table's writer, a listener of commits, cleans and rollbacks.
"""
