"""Indexes: how a write finds the file group of each incoming key (Hudi's hoodie.index.type)."""
