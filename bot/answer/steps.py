"""A question that asks how to do something, answered from the steps of a procedure.

"cách đăng kí ktx cho tân sv ntn vậy" is answered by a numbered list ("Các bước đăng ký: 1.
Đăng nhập cổng sinh viên tại portal… 2. Chọn mục…"). The step sharing most words with the
question is rarely the first one, and one step alone answers nothing: the answer quotes the
list from its first step, each with its number as the page writes it ("1.", "b)"), after the
sentence that introduces the list or the label over it.
"""

from __future__ import annotations

from bot.answer.units import MAX_QUOTE_CHARS, Unit


def quote_steps(units: list[Unit], pos: int, covered: set[int]) -> tuple[str, list[int]] | None:
    """The numbered list ``units[pos]`` is an item of, quoted whole from its first step, and
    the positions it used; None when the unit is no step, its list has one step only, or the
    list up to that step is too long to quote (the unit is then quoted alone)."""
    step = units[pos].step
    if not step:
        return None
    run = [i for i, u in enumerate(units) if u.step == step]
    if covered.intersection(run) or sum(1 for i in run if units[i].item) < 2:
        return None  # a step quoted already, or one step: no list to quote
    first = units[run[0]]
    intro = first.parent if first.parent is not None else first.label
    parts: list[str] = []
    used: list[int] = []
    if intro is not None and intro not in covered:
        text = units[intro].text
        parts.append(text if text.endswith(":") else f"{text}:")
        used.append(intro)
    size = sum(len(p) for p in parts)
    for i in run:
        unit = units[i]
        if unit.item:
            if size + len(unit.text) > MAX_QUOTE_CHARS and i > run[0]:
                break  # whole steps only
            parts.append(f"{unit.mark} {unit.text}".strip())
        elif size + len(unit.text) > MAX_QUOTE_CHARS:
            continue  # a step's later sentence that does not fit: the step is quoted without it
        else:
            parts.append(unit.text)
        used.append(i)
        size += len(unit.text)
    if pos not in used:
        return None
    return " ".join(parts), used
