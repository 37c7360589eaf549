"""Text processing for search: folding (`folding`), the one language guesser (`language`), keyword
terms and query rewriting (`terms`), the one sentence splitter of passages (`sentences`), and the
word lists behind them (`vocabulary`: retrieval/data/*.yaml and an operator's overrides).

Imports: `bot.core` only.
"""
