"""Sentence templates and entity pools of the world, by phrasing-variety level.

Level 0 (the default) has ONE template per operation for problems and for solution steps, and three
names and items: the text around the numbers is predictable, so a small model spends its capacity on
the numbers that decide a step's validity. Every solution step restates its operands in an equation
``a op b = c`` in ASCII (``+ - * /``), so the tokens that make a step right or wrong are local.

Placeholders: ``{name}`` ``{P}`` (capitalised pronoun) ``{p}`` ``{item}`` ``{other}`` ``{v}`` (a
quantity in the problem) and ``{a} {b} {c}`` (a step's operands and result).
"""

from __future__ import annotations

NAMES: tuple[tuple[str, str], ...] = (
    ("Ann", "she"), ("Ben", "he"), ("Mia", "she"), ("Sam", "he"), ("Lea", "she"), ("Tom", "he"),
    ("Zoe", "she"), ("Max", "he"), ("Ivy", "she"), ("Leo", "he"), ("Ada", "she"), ("Eli", "he"),
    ("Ruth", "she"), ("Omar", "he"), ("Nina", "she"), ("Raj", "he"), ("Kim", "she"), ("Luis", "he"),
    ("Sara", "she"), ("Jon", "he"),
)  # fmt: skip
ITEMS: tuple[str, ...] = (
    "apples", "marbles", "stickers", "cards", "pens", "shells", "coins", "books",
    "beads", "stamps", "cookies", "buttons", "rocks", "toys", "eggs", "plums",
)  # fmt: skip
POOL_SIZE = {0: 3, 1: 8, 2: 20}
"""How many names / items each variety level draws from."""

START = ("{name} has {v} {item}.", "{name} starts with {v} {item}.", "At first {name} has {v} {item}.")
DISTRACTOR = ("{other} has {v} {item}.", "{other} owns {v} {item}.", "{other} keeps {v} {item} at home.")
QUESTION = (
    "How many {item} does {name} have now?",
    "How many {item} does {name} have in the end?",
    "How many {item} are left with {name}?",
)
PROBLEM_OP: dict[str, tuple[str, ...]] = {
    "+": ("{P} gets {v} more {item}.", "{P} finds {v} more {item}.", "Then {p} buys {v} more {item}."),
    "-": ("{P} gives away {v} {item}.", "{P} loses {v} {item}.", "Then {p} gives {v} {item} to a friend."),
    "*": (
        "{P} gets {v} times as many {item}.",
        "Then {p} has {v} times as many {item}.",
        "The number of {item} {name} has grows {v} times.",
    ),
    "/": (
        "{P} splits the {item} into {v} equal groups and keeps one.",
        "{P} shares the {item} equally among {v} kids, {p} included, and keeps one share.",
        "Then {p} keeps one of {v} equal piles of {item}.",
    ),
}

STEP_OP: dict[str, tuple[str, ...]] = {
    "+": (
        "{P} gets {b} more, so {a} + {b} = {c} {item}.",
        "Adding the {b} new {item} gives {a} + {b} = {c}.",
        "With {b} more {item}, {p} has {a} + {b} = {c}.",
    ),
    "-": (
        "{P} gives away {b}, so {a} - {b} = {c} {item}.",
        "Taking away {b} {item} leaves {a} - {b} = {c}.",
        "After losing {b} {item}, {p} has {a} - {b} = {c}.",
    ),
    "*": (
        "{P} has {b} times as many, so {a} * {b} = {c} {item}.",
        "{b} times as many {item} is {a} * {b} = {c}.",
        "Growing {b} times, the {item} become {a} * {b} = {c}.",
    ),
    "/": (
        "{P} keeps one of {b} groups, so {a} / {b} = {c} {item}.",
        "One of {b} equal groups is {a} / {b} = {c} {item}.",
        "Splitting into {b} equal parts gives {a} / {b} = {c}.",
    ),
}
STEP_START = (
    "{P} starts with {v} {item}.",
    "At first {name} has {v} {item}.",
    "{name} begins with {v} {item}.",
)
STEP_OTHER = (
    "{other} has {v} {item}, which does not change the count.",
    "{other}'s {v} {item} do not matter here.",
    "The {v} {item} of {other} are not part of the question.",
)
STEP_NOW = (
    "So far {p} has {v} {item}.",
    "Right now {name} has {v} {item}.",
    "{name} has {v} {item} at this point.",
)
ANSWER = "The answer is {v}."


def level(templates: tuple[str, ...], variety: int) -> tuple[str, ...]:
    """The templates a variety level uses: the first one at level 0, two at level 1, all at level 2."""
    return templates[: (1, 2, len(templates))[variety]]
