"""Answering one question: the tiers (FAQ verbatim, cited documents, fallback), the replies'
fixed texts, extractive and LLM-written answers, follow-ups and query planning.
Imports ``bot.llm``, ``retrieval`` and below."""
