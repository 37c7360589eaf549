"""Text processing for search: folding (`folding`), the one language guesser (`language`), keyword
terms and query rewriting (`terms`), the one sentence splitter of passages (`sentences`), the
word lists behind them (`vocabulary`: retrieval/data/*.yaml and an operator's overrides), and the
language pack (`pack`: retrieval/data/language.yaml, the words the question, small-talk,
follow-up and guard rules read a message by). `datafiles` says where the bundled files live.

Imports: `bot.core` only.
"""
