"""Rules for how a turn relates to the assistant's last one: a short reply to its question, a
"yes, …" that answers it, a correction that restates the work in full, a closing tag question,
a question whose subject is a pronoun for the previous turn.
Read by :mod:`.triage` and :mod:`.triage_request`; the other word lists are in
:mod:`.triage_rules`."""

from __future__ import annotations

import re

REPLY_MAX_WORDS = 15
REPLY_QUESTIONS = 2
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
"""A turn of at most REPLY_MAX_WORDS words, naming no file or code name (ANCHOR), that answers
the assistant's question before the thread changed anything ("can leave it" to "`tui-renderer.ts`
stays, or should it move too? … Should I proceed with these moves?") is part of the thread's
request; the task states it with the last REPLY_QUESTIONS questions it answers."""

TAG_QUESTION = re.compile(
    r"(?i)^(?:or (?:do|would|should|can|could|is|are|any|what)\b.*|what do you think|"
    r"thoughts|any (?:other )?(?:ideas|suggestions|thoughts)|(?:does|do) (?:that|this) "
    r"(?:make sense|sound (?:good|right|ok))|makes sense|sounds? good|right|ok(?:ay)?|agreed?)"
    r"\s*\?\s*$"
)
"""A closing question that only asks for agreement or alternatives after a statement of what
to do ("…\n\nor do you have other suggestions?"): the request is the statement."""

RESTATED_ANCHORS = 4
"""A correction ("no, that's horrible.") followed by this many files, paths or code names or
more restates the task in full; what follows it is judged as the request."""
RESTATED_WORDS = 25
"""A correction followed by a request of its own ("no, that's not it … can you write a simple
test using Theme that loads the dark theme … ? put it in coding-agent/test") this long or
longer, naming a file, path or code name, states new work; what follows is the request."""

ANSWER_WORD = re.compile(r"(?i)^\s*(?:yes|yeah|yep|yup|sure|no|nope|nah)\b[\s,.!:;-]")
"""A turn opening with an answer to the assistant's question ("yes, in old pi link url as
666666" after "Should I add a new token like `mdLinkUrl`?")."""

DIRECTIVE = re.compile(
    r"(?i)^\s*(?:(?:it|this|that|they|the \w+) )?(?:should|must|needs? to|has to|have to)\b|"
    r"^\s*(?:don'?t|do not|never|always|make|look (?:at|into)|add|remove|fix|use|change|"
    r"rename|move|update|implement|create|write|refactor|adjust|set|delete|replace|let'?s)\b"
)
"""A sentence that asks for a change: a duty ("should be dimmer") or an imperative ("don't
modify the theme", "look into the footer sources"), not itself a question ("use postgres or
sqlite?"). A question with one in it is a request."""

CHALLENGE = re.compile(
    r"(?i)^\s*why (?:would|should) (?:we|you|it|this|that)\b|^\s*why do we even\b"
)
"""A question that challenges the design ("why would we track the file slash commands in the
interactive mode? agent session keeps track of those, no?"): it asks for the change that
answers it, as a duty would; "why are there 2 subscription handlers?" may only ask."""

DEFECT_REPORT = re.compile(
    r"(?i)^(?!\s*(?:who|whom|whose|what|which|where|when|why|how|is|are|was|were|am|do|does|did|"
    r"can|could|should|would|will|shall|may|might|must|have|has|had|\w+n'?t|not|no|you|i|or|so|"
    r"but|and|any|anything|else)\b)\s*\S+\s+\S+[^?]*\b(?:not|never|no longer|\w+n'?t)\b[^?]*\?\s*$"
)
"""A defect stated, with a question mark ("userMessageText is not used it seems?", "the footer
doesn't update?", "collapseChangelog = false, can't we get that from the settings manager?"):
a statement in word order — no question word or auxiliary opens it, nor "you" (the assistant's
own doing) — of something that is not so, or could be otherwise. It reports a bug to fix or
proposes the change, as a duty would; "is userMessageText used?" and "why are there 2
handlers?" ask."""

_EDIT_VERBS = (
    r"removed|changed|edited|fixed|added|deleted|updated|moved|renamed|rewrote|rewritten|"
    r"replaced|adjusted|modified|tweaked|cleaned up|ripped out|commented out"
)
BY_HAND = re.compile(
    rf"(?i)\bi(?:'ve|\s+have|\s+just|\s+already)*\s+(?:(?:manually|by hand)\s+(?:{_EDIT_VERBS}"
    rf"|undid|reverted)\b|(?:undid|undone|reverted|rolled back|discarded|threw away)\s+"
    r"(?:all\s+)?(?:your|the|those|these|my|that|this)\b[^.?!\n]{0,30}?\b(?:changes?|edits?|"
    rf"work)\b|(?:{_EDIT_VERBS})\b[^.?!\n]{{0,40}}?\b(?:myself|by hand|manually)\b)"
)
"""A later turn saying the person changed the workspace themself ("ok, i manually removed
almost all chalk uses", "i undid your changes, try again", "i fixed the import myself"): edits
between events that nothing recorded, so the replayed workspace after them is not the one the
session worked in. Not "you removed…" (the assistant's doing) nor "i want it removed"."""

PRONOUN_SUBJECT = re.compile(
    r"(?i)(?:^|[,;:]\s*)(?:(?:so|and|but|now|then)\s+)*"
    r"(?P<it>it'?s|its|it|they'?re|they|that'?s)\s+"
    r"(?!(?:not\s+)?(?:possible|safe|ok|okay|worth|true|fine|necessary|better|best|easy|hard|"
    r"a good idea|time)\b)\w"
)
"""A question whose main clause has a pronoun for its subject ("so now, when hosted on
render.com, its likely /dev/urandom?"): in a later short turn, what it asks about is the
previous turn, whatever else it names; not the expletive "is it possible …", "it's worth …"."""
