"""Streamer command lines the integration tests share: JSON order files into an `orders` table."""


def orders_argv(root, *extra: str) -> list[str]:
    """JsonDFSSource reading ``<root>/in`` into ``<root>/orders``, keyed by id, by region; ``root``
    a local folder or an object-store URI."""
    return ["--target-base-path", f"{root}/orders", "--target-table", "orders",
            "--source-class", "JsonDFSSource", "--source-ordering-field", "ts",
            "--hoodie-conf", f"hoodie.streamer.source.dfs.root={root}/in",
            "--hoodie-conf", "hoodie.datasource.write.recordkey.field=id",
            "--hoodie-conf", "hoodie.datasource.write.partitionpath.field=region", *extra]
