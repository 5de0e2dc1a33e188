"""Query filters: predicates a reader pushes down, and what column ranges say about them."""
