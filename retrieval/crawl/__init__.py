"""Crawling a web site into `LoadedDocument`s (retrieval.crawl.crawler), page by page
(retrieval.crawl.pages), with URLs compared in one form and sites bounded by scheme, host and port
(retrieval.crawl.urls), every request through one fetcher (retrieval.crawl.fetch) that connects
only to the addresses retrieval.crawl.addresses allows.

Imports: `bot.core`, `retrieval.loading` and `retrieval.text`; no database.
"""
