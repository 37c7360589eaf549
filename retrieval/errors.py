from bot.errors import TuvanError


class RetrievalError(TuvanError):
    pass


class EmbedderError(RetrievalError):
    pass


class IndexMismatchError(RetrievalError):
    """The index was built with another embedding model or dimension than the configured one."""


class IngestError(RetrievalError):
    pass
