"""Crawling a web site into `LoadedDocument`s (retrieval.crawl.crawler), page by page
(retrieval.crawl.pages), with URLs compared in one form (retrieval.crawl.urls).

Imports: `bot.core`, `retrieval.loading` and `retrieval.text`; no database.
"""
