"""Several writers on one table: locks, heartbeats and optimistic conflict resolution (as Hudi 1.x)."""
