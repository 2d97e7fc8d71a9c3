"""Solutions to the fixture tasks written here, not taken from the sessions.

``CORRECT``: each family's fixture solved independently and differently from the oracle (other
algorithms, other file layout); the verifier must give each reward 1. ``WRONG``: plausible
wrong solutions, each passing some of the hidden tests; the verifier must give each 0. The
give-up solution (no file changed) and the session's own failed attempts (``probes/``) are the
other wrong ones the tests use.
"""

from __future__ import annotations

STATS = """import statistics


def mean(xs):
    return statistics.fmean(xs)


def median(xs):
    return statistics.median(xs)
"""

CALC = """def clamp(value, low, high):
    return max(low, min(value, high))
"""

INVENTORY = """class Inventory:
    def __init__(self):
        self.items = {}

    def add_item(self, name, qty=1):
        self.items[name] = self.items.get(name, 0) + qty
        return self.items[name]

    def remove_item(self, name, qty=1):
        if self.items.get(name, 0) < qty:
            raise KeyError(name)
        left = self.items.pop(name) - qty
        if left:
            self.items[name] = left
        return left
"""

SLUGKIT = """def slugify(text, separator="-"):
    words, word = [], ""
    for ch in text.lower():
        if ch.isascii() and ch.isalnum():
            word += ch
        elif word:
            words.append(word)
            word = ""
    if word:
        words.append(word)
    return separator.join(words)
"""

WORDFREQ = """import re


def count_words(text):
    counts = {}
    for word in re.findall(r"[a-z']+", text.lower()):
        counts[word] = counts.get(word, 0) + 1
    return counts


def top_words(text, n=3):
    if n < 1:
        return []
    pairs = sorted(count_words(text).items())
    pairs.sort(key=lambda pair: pair[1], reverse=True)
    return pairs[:n]
"""

CORRECT = {
    "stats": {"stats.py": STATS},
    "calc": {"calc.py": CALC},
    "inventory": {"inventory.py": INVENTORY},
    "slugkit": {"slugkit/__init__.py": SLUGKIT},  # no slugkit/core.py: the package itself
    "wordfreq": {"wordfreq.py": WORDFREQ},
}

MOST_COMMON = """from collections import Counter


def count_words(text):
    return Counter(text.lower().split())


def top_words(text, n=3):
    return Counter(text.lower().split()).most_common(max(n, 0))
"""
"""Ties in insertion order, not alphabetically: passes every mined test of wordfreq; only the
tests derived from the session's call ``top_words('y x y x z', 1)`` catch it."""

SLUG_SPACES = """def slugify(text, separator="-"):
    return separator.join(text.lower().split())
"""
"""Splits on spaces only: ``slugify("Hello, World!")`` gives ``hello,-world!``."""

WRONG = {
    "wordfreq": {"wordfreq.py": MOST_COMMON},
    "slugkit": {"slugkit/__init__.py": SLUG_SPACES},
    "stats": {
        "stats.py": "def mean(xs):\n    return sum(xs) / len(xs)\n\n\ndef median(xs):\n"
        "    return sorted(xs)[len(xs) // 2]\n"
    },
}
