"""The near-miss guard: tier 1 refuses an FAQ entry that is about something else than the question.

Sentence embeddings barely see one word: "học phí ngành Kỹ thuật Máy tính" is at cosine 0.95 from
the FAQ "Học phí ngành Khoa học Máy tính", and the verbatim answer would be wrong. The guard reads
*facets* from both questions (year, major, programme type, admission method, asked attribute,
codes, numbers...) and compares them category by category, each with its own policy. The
vocabulary and the policies live in the ``guard`` section of ``data/language.yaml``, the language
pack (documented there), extended by the file in ``TextSettings.guard_vocabulary_file`` so that a
university can add its majors, campuses and own names without touching code.

Two rules, both read from the same facets:

- **no conflict**: the question and the FAQ question must not name different values (another
  major, another year...), each category with its own policy;
- **asked and covered** (2/6): every value the question asks in a ``covered`` category (what is
  asked: học phí, chỉ tiêu...; whom or what about: a major, a programme, a method...) must be
  said somewhere in the entry: its question or its answer. "Học phí hệ vừa làm vừa
  học" must not get the entry *about* vừa làm vừa học that never mentions tuition. An asked
  attribute also counts as covered when the answer holds the kind of value it asks for (an
  amount for học phí, a date for hạn nộp, a phone number for liên hệ; ``kinds`` in that section).

The guard only vetoes: a question it cannot read (no facets) is left to the similarity threshold.

The modules: `verdicts` (what the guard says), `categories` (a category of the vocabulary: its
policy and patterns), `reader` (reading a text: its facets and the words that said each value),
`checks` (`NearMissGuard`) and `vocabulary` (that section and an operator's file, merged).
Imports: `bot.core` and `retrieval.text`.
"""
