"""``tuvan eval``: retrieval, tiers, FAQ precision and answers measured on question sets.

Every run builds a throwaway database (``workspace``), loads the knowledge to measure into it
with tuvan's own code, asks the questions and scores them (``metrics``), then writes
``report.json``, ``report.md`` and plots (``report``). The data formats are those of the
development datasets (``data``).

    questions         retrieval at k, tiers and key facts on a questions file
    answer_summaries  the answers of a questions run summed up
    questions_report  its JSON, Markdown and plots
    faq               tier 1 alone on FAQ-matching queries (faq_report: its report)
    calibration       t_doc swept; the thresholds chosen, reported and stored
    judge             an LLM grading answers against the expected one

Imports ``bot.knowledge``, ``bot.answer``, ``bot.llm``, ``retrieval``, ``bot.db`` and
``bot.core``; the command line (``bot.cli.commands.evaluate``) parses and prints.
"""
