"""Offline use-cases that change the knowledge base, called alike by the command line, the
admin, the evaluation and the worker:

    ingest                the one ingestion: files, folders, URLs, crawled sites, uploads; reindex
    jobs                  the shape of the offline jobs (plan / run) and of progress reporting
    document_augment      URAG-D with the LLM: document contexts, chunk rewrites, summaries
    extractive_summaries  document summaries without an LLM
    stored_documents      documents and chunks as those jobs read them
    faq_paraphrases       generated phrasings of FAQ questions (with or without an LLM)
    faq_drafts            FAQ drafts written by the LLM from chunks (faq_draft_store: their SQL)
    faq_files             FAQ files (JSONL, CSV, YAML, .xlsx) read, written, imported and exported
    faq_workbook          the FAQ as an Excel workbook (.xlsx), for faq_files
    faq_check             published phrasings asked as a student would, problems listed
    sources               the indexed sources and what derives from each; a source removed
    link_graph            the communities of the pages' link graph, for hybrid+graph
    demo                  the bundled demo knowledge base

Imports ``bot.answer``, ``bot.llm``, ``bot.conversations``, ``retrieval``, ``bot.db`` and
``bot.core``; never ``bot.runtime``, the web, the worker, the admin or the command line.
"""
