"""The words and thresholds that judge a qa thread: is the request a question, does it ask
for something a fixed answer key can check, and does the answer state facts or converse.

:mod:`.qa` applies them to threads that changed no workspace file; :func:`.triage_text.
is_question` reads :data:`QUESTION`. Like the rest of :mod:`.triage_rules`, they were written
from the real dumps in ``../shared/corpus`` and name classes of text, not single sessions.
"""

from __future__ import annotations

import re

QUESTION = re.compile(
    r"""(?xi)
    \?\s*$
  | ^\s*(?:what|which|where|when|who|whom|whose|how|why|list|show\ me|tell\ me|find|count
          |give\ me|name|explain|describe|summari[sz]e|check\ (?:if|whether|what|which|how))\b
    """
)
"""A request that asks for information: it ends with a question mark, or opens with a
question word or an information verb."""

_ABOUT = (
    r"(?:did|have|has|were|are) you|are we|you still|(?:did|have) i just|"
    r"(?:this|our) (?:session|conversation|chat)"
)
ABOUT_THE_ASSISTANT = re.compile(rf"(?i){_ABOUT}")
"""The NOT_CHECKABLE_REQUEST words that ask about the assistant's doings ("did you update
docs/theme.md"), the person's own last step ("what did i just execute?") or the session itself
("when did this session start?"), not for advice."""

NOT_CHECKABLE_REQUEST = re.compile(
    r"(?i)\b(?:what do you think|your (?:opinion|thoughts|take)|should (?:we|i)|would it be "
    r"better|which is better|pros and cons|recommend|suggest|propose|plan|design|brainstorm|"
    r"ideas?|walk me through|how (?:would|should|could) (?:we|i|you)|can we|could we|"
    rf"is it possible|any way|{_ABOUT}|"
    r"(?:would|does|will|do) (?:it|this|that) make sense|"
    r"(?:better|best|nicer|clearer|good|shorter) (?:name|title|wording|word|label)s?|"
    r"alternatives?|naming|what (?:should|could|would) (?:it|this|that|we) (?:be )?called|"
    r"what would be (?:a|an|the) (?:better|best|good|nicer|cleaner))\b"
)
"""Opinion, advice and planning ("would it make sense to show the unsent bash runs above the
editor?"), naming ("what would be a better name for such section? give
few alternatives"), and questions about the assistant's own doings ("did you update…?"):
nothing a fixed answer key over the workspace could check."""

FOLLOW_UP = re.compile(
    r"""(?xi)
    ^\W*(?:(?:and|so|ok(?:ay)?|hmm+|but)\W+)?
    (?:(?P<bare>what\s+else|why(?:\s+not)?|how\s+come|really|and\s+then|which\s+one)\W*$
      |(?:(?:what|how)\s+about|what\s+of|same\s+(?:for|with)|and\s+(?:for|in|with)
         |also\s+for)\b(?P<rest>[^?]*)\?*\s*$)
    """
)
"""A question whose subject is the previous turn: "what about `path/to/example.ts` ?", "and
for the tests?", or a bare "why not?". Asked on its own it has no subject; with few words
after its opener (:data:`FOLLOW_UP_WORDS`) it is not self-contained."""
FOLLOW_UP_WORDS = 6
"""A follow-up opener followed by more words than this states its own subject."""

CHAT_ANSWER = re.compile(
    r"(?i)^\W*(?:that'?s|that is|i agree|agreed|you'?re right|good (?:call|idea|point|catch)|"
    r"love (?:this|it)|nice|great (?:idea|call|question)|makes sense|thanks|thank you|"
    r"no problem|of course|absolutely|happy to)\b"
)
"""Answers that converse (agree, thank, praise) rather than state facts."""

ACTION_ANSWER = re.compile(
    r"""(?xi)
    ^\s*(?:\W*\s*)?(?:done|all\ done|all\ set|finished|completed|fixed|committed|pushed|deployed
      |installed|updated|added|created|removed|deleted|renamed|moved|changed|implemented
      |refactored|restarted|started|stopped|ran|running|merged|reverted|applied|wrote|saved
      |i(?:'ve|\ have)\ (?:done|made|added|updated|created|fixed|committed|pushed|installed
      |removed|changed|implemented|refactored|restarted|moved|renamed|written|run|applied)
      |let\ me|i'll|i\ will|now\ (?:let|i)|perfect|great|got\ it|sure)\b
    """
)
"""Answers that report what was done rather than state facts ("Done.", "Committed and
pushed…", "Let me check…"): not answers to a question."""

BARE_WORD = re.compile(r"[a-z]{1,14}")
"""A fact spelled as one plain lowercase word (`entries`, `tokens`): a key made only of such
words could be hit by a guess from the question's subject, so it holds no crux."""

MIN_REQUIRED_FACTS = 1
"""A qa task needs at least one grounded fact its answer must state."""
MAX_REQUIRED_FACTS = 3
"""At most this many facts are required: the ones the question asks for, first stated."""

PREDICATE = re.compile(r"([A-Za-z]{3,})[^A-Za-z]*$")
"""The last word of a yes/no question: what it asks about ("is the random number seeded?")."""
DENIAL = r"(?i)(?:\bnot|n't|\bnever|\bno)\s+(?:[\w`()-]+\s+){0,2}"
"""A denial just before a yes/no question's last word in the answer's first sentence ("…
isn't seeded like a traditional PRNG", "is not persisted to disk") answers it "no" as plainly
as a leading "No" does."""


def first_sentence_denies(text: str, word: str) -> bool:
    """``text``'s first sentence denies ``word`` (:data:`DENIAL` just before it): the rule the
    answer key is made by (``reconstruct.qa``) and the checker reads it by (``answer_facts``)."""
    first = re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0]
    return re.search(DENIAL + re.escape(word) + r"\b", first) is not None
