"""``tuvan eval``: retrieval, tiers, FAQ precision and answers measured on question sets.

Every run builds a throwaway database (``workspace``), loads the knowledge to measure into it
with tuvan's own code, asks the questions and scores them (``metrics``), then writes
``report.json``, ``report.md`` and plots (``report``). The data formats are those of the
development datasets (``data``).
"""
