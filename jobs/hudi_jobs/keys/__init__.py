"""The ``hoodie.*`` options of the jobs, one module per area, each key defined once (through
``hudi_engine.config.define``) with Hudi's own name and default. No PySpark here: the operator
validates job configs with these definitions."""
