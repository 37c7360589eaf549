"""The exception hierarchy of tuvan.

TuvanError
├── ConfigError            a setting is missing or inconsistent
├── DatabaseError          the database is unreachable or its schema is behind
├── LlmError               the LLM endpoint failed or answered unusably
└── retrieval.errors.RetrievalError
    ├── EmbedderError      an embedder could not load or embed
    ├── IndexMismatchError the stored index was built with another model or dimension
    └── IngestError        a source could not be read (the caller logs and skips it)
"""


class TuvanError(Exception):
    """Base of every error tuvan raises on purpose."""


class ConfigError(TuvanError):
    pass


class DatabaseError(TuvanError):
    pass


class LlmError(TuvanError):
    pass
