"""Table schemas: Arrow in the engine, Avro JSON on disk (the shapes Hudi's Spark writer records)."""
