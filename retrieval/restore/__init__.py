"""Diacritic restoration for questions typed without marks ("hoc phi nganh" → "học phí ngành").

e5 embeds unaccented Vietnamese far from the accented text it was trained on (dense MRR@10 on
ViRHE4QA: 0.67 written, 0.10 folded), so the dense side of search and the FAQ match get the
question with its marks put back. The model is learned from the knowledge base itself (chunks and
FAQ texts, where the school's own words are: "khóa luận", "phúc khảo", "xét tuyển"), backed by
general Vietnamese that every installation has:

- underthesea's Viet74K lexicon (74k words and phrases): which accented forms exist, and the
  syllable pairs inside words;
- the VLSP 2013 sample underthesea ships with its tagger (~70k words of running text): how often
  everyday words are written;
- retrieval/data/phrasing_vi.txt: how students word a question in chat (particles, question
  words, greetings), written for this project.

Method: every folded syllable ("phi") has the forms seen for it ("phi", "phí", "phì", ...); an
interpolated Kneser-Ney syllable bigram model over the pooled counts scores a sequence of forms,
and Viterbi picks the best one for each clause. Words that already carry marks are kept and serve
as context; numbers are one symbol ("05 năm", and a question's "bao nhiêu năm" reads as a number
there); the abbreviations retrieval.text.terms writes out ("cntt", "đc", "v") are kept as typed
and read as their expansion for the words around them.

The general counts are loaded once per process; the knowledge base's counts (``NgramCounts``)
are what a store shares (retrieval.restore.store serialises them with ``to_bytes``).

The modules: `ngrams` (the syllables of a text and their counts), `restorer` (the model and its
Viterbi search) and `store` (the knowledge base's counts, learned once and kept in the database).
Imports: `bot.db.models`, `retrieval.changes` and `retrieval.text`.
"""
