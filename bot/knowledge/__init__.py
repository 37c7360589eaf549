"""Offline use-cases that change the knowledge base, called alike by the command line, the
admin and the worker: ingestion, document augmentation, FAQ paraphrases and drafts, FAQ files,
sources and the demo. Imports ``bot.llm``, ``retrieval`` and below."""
