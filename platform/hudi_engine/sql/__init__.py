"""Hudi through Spark's own interfaces, for users who know Hudi from its docs and book:
``df.write.format("hudi")`` (the ``hudi`` data source in ``datasource``, its rows staged by Spark's
tasks and written by the driver in ``dataframe_write``); SQL statements, CALL procedures and
streaming come here too. Each is a thin Spark hook over the engine's API; ``hudi_engine.spark``
registers them in a session (``sessions``)."""
