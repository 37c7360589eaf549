"""The chat model: the OpenAI-compatible client and its prompts, the runner of offline batch
jobs, and the number check every generated text passes. Imports ``retrieval`` and below."""
