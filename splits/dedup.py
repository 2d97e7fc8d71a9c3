"""Exact and near-duplicate removal over normalised instruction + oracle diff.

Each task is reduced to one normalised text: its instruction (lower case, whitespace
collapsed), then the lines its oracle adds or removes relative to its starting workspace
(whitespace collapsed, per file in path order), then its expected answer for qa tasks. Equal
texts are exact duplicates; texts whose MinHash signatures (word 3-shingles, 128 permutations,
banded LSH for candidates) estimate a Jaccard similarity at or above the threshold are near
duplicates. Tasks are visited in id order and a task is dropped when it duplicates one already
kept, so the result does not depend on the order tasks were found in.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from trajforge.records import Duplicate
from trajforge.splits.tasks import LoadedTask, PackedFile

NUM_PERM = 128
BANDS = 32
SHINGLE = 3
_PRIME = np.uint64((1 << 61) - 1)
_rng = np.random.default_rng(20250101)
_A = _rng.integers(1, (1 << 61) - 1, NUM_PERM, dtype=np.uint64)
_B = _rng.integers(0, (1 << 61) - 1, NUM_PERM, dtype=np.uint64)
_MASK = np.uint64((1 << 32) - 1)
_WORD = re.compile(r"\w+|[^\w\s]")
_SPACE = re.compile(r"\s+")

Signature = npt.NDArray[np.uint64]


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.lower()).strip()


def _texts(files: Sequence[PackedFile]) -> dict[str, str]:
    return {f.path: f.content for f in files}


def normalised_text(item: LoadedTask) -> str:
    """Instruction + oracle diff (+ answer), normalised, as one string."""
    start = _texts(item.folders.get("workspace", ()))
    end = _texts(item.folders.get("oracle", ())) if item.task.oracle else start
    parts = [_norm(item.task.instruction)]
    for path in sorted(set(start) | set(end)):
        before, after = start.get(path, ""), end.get(path, "")
        if before == after:
            continue
        parts.append(f"@@ {path}")
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0):
            if line[:1] in "+-" and not line.startswith(("+++", "---")):
                parts.append(line[0] + _norm(line[1:]))
    if item.task.answer is not None:
        parts.append("answer: " + _norm(item.task.answer))
    return "\n".join(parts)


def signature(text: str) -> Signature:
    """MinHash signature of the word ``SHINGLE``-grams of ``text``."""
    words = _WORD.findall(text)
    grams = {" ".join(words[i : i + SHINGLE]) for i in range(max(1, len(words) - SHINGLE + 1))}
    hashes = np.array(
        [int.from_bytes(hashlib.blake2b(g.encode(), digest_size=4).digest(), "big") for g in grams],
        dtype=np.uint64,
    )
    # (a*h + b) wraps mod 2**64 before mod p; the low 32 bits are then well mixed even for
    # small h (the scheme datasketch uses)
    with np.errstate(over="ignore"):
        mixed = ((hashes[:, None] * _A[None, :] + _B[None, :]) % _PRIME) & _MASK
    result: Signature = mixed.min(axis=0)
    return result


def similarity(a: Signature, b: Signature) -> float:
    """Estimated Jaccard similarity of two signatures."""
    return float(np.count_nonzero(a == b)) / NUM_PERM


def _bands(sig: Signature) -> list[tuple[int, bytes]]:
    rows = NUM_PERM // BANDS
    return [(i, sig[i * rows : (i + 1) * rows].tobytes()) for i in range(BANDS)]


def dedup(
    items: Sequence[LoadedTask], threshold: float = 0.8
) -> tuple[list[LoadedTask], list[Duplicate]]:
    """Kept tasks (id order) and the duplicates removed."""
    kept: list[LoadedTask] = []
    removed: list[Duplicate] = []
    exact: dict[str, str] = {}
    buckets: dict[tuple[int, bytes], list[int]] = defaultdict(list)
    sigs: list[Signature] = []
    answers: list[str | None] = []
    for item in sorted(items, key=lambda t: t.task.id):
        text = normalised_text(item)
        key = hashlib.sha256(text.encode()).hexdigest()
        if key in exact:
            removed.append(
                Duplicate(removed=item.task.id, kept=exact[key], kind="exact", similarity=1.0)
            )
            continue
        sig = signature(text)
        match = _near(sig, sigs, buckets, threshold, (answers, item.task.answer))
        if match is not None:
            index, score = match
            removed.append(
                Duplicate(
                    removed=item.task.id, kept=kept[index].task.id, kind="near", similarity=score
                )
            )
            continue
        exact[key] = item.task.id
        for band in _bands(sig):
            buckets[band].append(len(kept))
        sigs.append(sig)
        answers.append(item.task.answer)
        kept.append(item)
    return kept, removed


def _near(
    sig: Signature,
    sigs: Sequence[Signature],
    buckets: dict[tuple[int, bytes], list[int]],
    threshold: float,
    answer_of: tuple[Sequence[str | None], str | None],
) -> tuple[int, float] | None:
    """Most similar earlier task above ``threshold``; tasks whose expected answers differ
    (templated qa / data-analysis questions) are different tasks, never near duplicates."""
    answers, answer = answer_of
    candidates = sorted(
        i
        for i in {i for band in _bands(sig) for i in buckets.get(band, ())}
        if answers[i] == answer
    )
    best: tuple[int, float] | None = None
    for index in candidates:
        score = similarity(sig, sigs[index])
        if score >= threshold and (best is None or score > best[1]):
            best = (index, score)
    return best
