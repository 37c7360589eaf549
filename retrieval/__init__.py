"""Text processing, embedders, indexing, FAQ matching and hybrid search."""
