"""Tier 1: matching a question against published FAQ entries.

Candidates (``faq_candidates``) come from two rankers, fused as tier 2 fuses them
(retrieval.search.fusion.score_fusion): the dense search of the question as read
(retrieval.query: restored, expanded) against the entries' questions and variants, and BM25
over each entry's folded words (question, variants and answer: the answer is where the thing
asked is said). A stored question or variant asked verbatim (same folded words) is a candidate
with similarity 1.

The best candidate the near-miss guard lets through (retrieval.guard: no conflict, every asked
slot said by the entry) is accepted when

- its dense similarity reaches ``t_faq``;
- the question's words are covered by the entry (``coverage``: the IDF-weighted share of the
  question's keyword terms that the entry's question, variants or answer hold, IDF over the
  published entries; the words the guard reads count as held, the guard checks those slots
  itself) at least ``min_coverage``: a question that adds a subject the entry never mentions
  ("giảng viên" where the entry is about students) is another question. Staff phrasings count
  here (their words are how students ask) but not for the guard's slots, which the entry's
  question or answer must say;
- no entry with another answer comes within ``margin`` of it on the fused score.

A verbatim match is accepted unless an entry with another answer holds the same phrasing. The
answer itself is never touched here or later.

The modules: `lexicon` (the published entries' words, cached per process), `candidates` (the two
rankers fused) and `decision` (the thresholds, the guard and the margin).
Imports: `bot.core`, `retrieval.guard`, `retrieval.search.fusion`, `retrieval.search.keyword`,
`retrieval.text` and `retrieval.changes`.
"""
