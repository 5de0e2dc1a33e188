"""Streamer command lines the integration tests share: JSON order files into an `orders` table."""


def orders_argv(tmp_path, *extra: str) -> list[str]:
    """JsonDFSSource reading ``tmp_path/in`` into ``tmp_path/orders``, keyed by id, by region."""
    return ["--target-base-path", str(tmp_path / "orders"), "--target-table", "orders",
            "--source-class", "JsonDFSSource", "--source-ordering-field", "ts",
            "--hoodie-conf", f"hoodie.streamer.source.dfs.root={tmp_path / 'in'}",
            "--hoodie-conf", "hoodie.datasource.write.recordkey.field=id",
            "--hoodie-conf", "hoodie.datasource.write.partitionpath.field=region", *extra]
