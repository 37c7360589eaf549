"""tuvan: an admissions chatbot on PostgreSQL (URAG: FAQ verbatim → cited documents → fallback)."""

__version__ = "0.1.0"
