"""A table's identity: hoodie.properties and its meta client."""
