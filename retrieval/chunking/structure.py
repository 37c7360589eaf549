"""The structure chunker: sections first, then blank lines, lines, sentences and words.

Where a chunk may end, from most to least preferred:

1. a section (heading) boundary - consecutive tiny sections under one parent heading are merged,
   each keeping its heading as a line of the chunk text;
2. a blank line between paragraphs, lists and tables (a caption line stays with its table if the
   sizes allow, and a table's later pieces repeat it); never after a line that heads what follows
   ("… gồm:") when another cut is possible;
3. a line: a list item or a table row is never cut, and each piece of a table repeats its header;
4. a sentence end, the next piece repeating `overlap_sentences` sentences (only for a line longer
   than `max_tokens`);
5. a space between words (a "sentence" longer than `max_tokens`), and last between characters.

Within a section the chunks are as few as `target_tokens` allows and as even as possible; none is
longer than `max_tokens`. Sizes come from `count_tokens`: the embedder's tokenizer when the caller
has it, `approx_tokens` otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.chunking.base import (
    HEADING_SEPARATOR,
    ChunkDraft,
    ChunkSizes,
    TokenCounter,
    approx_tokens,
    common_prefix,
    memoized,
)
from retrieval.chunking.splitting import Splitter
from retrieval.loading.document import LoadedDocument, Section

# This chunker's sizes when the caller gives none: a little larger than the indexer's
# (`DEFAULT_SIZES`, which `chunk_for` passes).
STRUCTURE_SIZES = ChunkSizes(target_tokens=300, max_tokens=450)


def chunk_document(
    doc: LoadedDocument,
    *,
    count_tokens: TokenCounter = approx_tokens,
    sizes: ChunkSizes = STRUCTURE_SIZES,
) -> list[ChunkDraft]:
    """Chunks of `doc` in reading order, numbered 0..n-1; whitespace-only text gives none."""
    count = memoized(count_tokens)
    splitter = Splitter(count, sizes)
    drafts: list[ChunkDraft] = []
    for section in _merge_small_sections(doc.sections, count, sizes.target_tokens):
        for text in splitter.split(section.text):
            drafts.append(
                ChunkDraft(len(drafts), text, section.heading_path, section.page, count(text))
            )
    return drafts


# --- merging tiny sections -----------------------------------------------------------------------


def _render_group(group: list[Section]) -> Section:
    if len(group) == 1:
        return group[0]
    common = common_prefix([section.heading_path for section in group])
    text = "\n\n".join(_labelled(section, common) for section in group)
    return Section(common, text, group[0].page)


def _same_parent(group: list[Section]) -> bool:
    """Every member sits directly under the group's common heading (siblings, or parent+child)."""
    common = common_prefix([section.heading_path for section in group])
    return all(len(common) >= len(section.heading_path) - 1 for section in group)


def _merge_small_sections(
    sections: Sequence[Section], count_tokens: TokenCounter, target: int
) -> list[Section]:
    """Sections ready to split: consecutive small ones under one parent are merged while the
    result stays within `target`. A tiny leftover (a lone line such as "A. Phương thức xét
    tuyển", or a trailing "Chia sẻ:") leads into the next section when it sits above it, or
    else closes the previous section when it sits under it, instead of becoming a chunk that
    says nothing."""
    tiny = target // 6
    merged: list[Section] = []
    group: list[Section] = []

    def close_group() -> None:
        section = _render_group(group)
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and count_tokens(section.text) <= tiny
            and previous.page == section.page
            and _is_prefix(previous.heading_path, section.heading_path)
        ):
            merged[-1] = Section(
                previous.heading_path,
                f"{previous.text}\n\n{_labelled(section, previous.heading_path)}",
                previous.page,
            )
        else:
            merged.append(section)

    for section in sections:
        text = section.text.strip()
        if not text:
            continue
        section = Section(section.heading_path, text, section.page)
        if group and section.page == group[0].page:
            lead = _render_group(group)
            candidate = [*group, section]
            if (
                count_tokens(section.text) <= target
                and count_tokens(lead.text) <= target
                and _same_parent(candidate)
                and count_tokens(_render_group(candidate).text) <= target
            ):
                group = candidate
                continue
            if count_tokens(lead.text) <= tiny and _is_prefix(
                lead.heading_path, section.heading_path
            ):
                text = f"{_labelled(lead, section.heading_path)}\n\n{section.text}"
                group = [Section(section.heading_path, text, section.page)]
                continue
        if group:
            close_group()
        group = [section]
    if group:
        close_group()
    return merged


def _is_prefix(outer: tuple[str, ...], inner: tuple[str, ...]) -> bool:
    """`outer` is `inner` or one of its ancestors."""
    return inner[: len(outer)] == outer


def _labelled(section: Section, context: tuple[str, ...]) -> str:
    """The section's text, under the part of its heading path that `context` does not show."""
    common = common_prefix([section.heading_path, context])
    label = HEADING_SEPARATOR.join(section.heading_path[len(common) :])
    return f"{label}\n{section.text}" if label else section.text


# --- splitting one section -----------------------------------------------------------------------
