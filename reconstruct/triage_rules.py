"""Every word list, pattern and threshold triage uses, in one place, each saying why.

Triage (:mod:`trajforge.reconstruct.triage`) decides which session episodes are tasks at all.
The rules are deterministic and read only the session. They were written from what real dumps
hold (``../shared/corpus``: Claude Code, Codex, opencode, pi; the hermes gateway's nudges) and
name classes of text, not single files. Precision comes first: when a rule is unsure it drops,
with a reason from :class:`trajforge.records.Reason`. The rules that judge the session's work
rather than its text (live calls, workspace roots, docs-only changes) are in
:mod:`.triage_rules_work`; the ones that judge questions and answers (qa) in
:mod:`.triage_rules_qa`.
"""

from __future__ import annotations

import re

# the qa rules (questions, checkable answers) are in triage_rules_qa; facts reads this here
from trajforge.reconstruct.triage_rules_qa import MAX_REQUIRED_FACTS as MAX_REQUIRED_FACTS


def words(text: str) -> frozenset[str]:
    """A word list written as text, one word per whitespace."""
    return frozenset(text.split())


# --- harness_injected: text the harness or the environment put in the user role ---------

WRAPPED_BLOCKS = re.compile(
    r"""(?xs)
    <(?P<tag>system-reminder|ide_opened_file|ide_selection|ide_diagnostics|environment_context
      |user_instructions|permissions\ instructions|command-name|command-message|command-args
      |command-contents|local-command-stdout|local-command-stderr|local-command-caveat
      |task-notification|user-prompt-submit-hook|bash-notification|turn_aborted
      |user_shell_command|system_instruction|session-start-hook|hook_output|bash-input
      |bash-stdout|bash-stderr)>
    .*?(?:</(?P=tag)>|\Z)
    """
)
"""XML-ish blocks Claude Code (IDE context, reminders, slash commands, local command output,
the person's own `!` shell commands, background-task notifications, hooks) and Codex
(environment / user-instruction context) wrap around or instead of what the person typed.
They are cut out; what is left is the request."""

INJECTED_MESSAGES = re.compile(
    r"""(?xi)
    ^\s*(?:
        \[system:                                  # hermes verification / tool nudges
      | caveat:\ the\ messages\ below\ were\ generated\ by\ the\ user\ while\ running
      | this\ session\ is\ being\ continued\ from\ a\ previous\ conversation
      | (?:the\ )?conversation\ (?:summary|history)\ (?:so\ far|above)
      | summary\ of\ (?:the|our)\ (?:previous|earlier)\ conversation
      | <summary>                                  # compaction summaries (pi, opencode)
      | the\ following\ is\ a\ summary\ of
      | what\ did\ we\ do\ so\ far\?               # opencode's compaction prompt
      | stop\ hook\ feedback
      | \S*\ hook\ (?:feedback|output|error|blocking\ error)
      | \[request\ interrupted
      | \#\ agents\.md\ instructions
      | <user_instructions>|<environment_context>
      | you\ are\ (?:a|an)\ (?:helpful\ )?(?:ai\ )?(?:coding\ )?(?:agent|assistant)\b  # prompts
      | api\ error:                                # errors echoed back into the user role
    )
    """
)
"""Whole messages the harness wrote: nudges, caveats, compaction and branch summaries, hook
reports, system prompts pasted in the user role. Such a message is never a request."""

SUMMARY_SHAPE = re.compile(
    r"(?im)^\s*(?:#+\s*|\*\*)?(?:\d+\.\s*)?(?:next steps?|pending tasks|key decisions|"
    r"current (?:work|state)|primary request and intent|files and code sections|errors and fixes|"
    r"all user messages|optional next step|key technical concepts|problem solving|goal|"
    r"instructions|discoveries|accomplished|relevant files(?: ?/ ?directories)?|"
    r"critical context|key facts|decisions(?: made)?|open issues|task objective|files modified|"
    r"progress(?: so far)?|remaining (?:tasks|work))\s*(?:\*\*)?\s*:?\s*$"
)
SUMMARY_HEADINGS = 2
"""Compaction summaries (Claude Code's, opencode's "Goal / Instructions / Discoveries /
Accomplished", pi's) are made of these section headings. A summary that lost its first line
(one real Claude Code dump starts mid-word) still has them; two mark a message as a summary."""

TRANSCRIPT_MARK = re.compile(r"(?m)^(?:▣\s+\w+ · |Thinking: |# Todos$|→ Read |← Edit |\$ \S)")
TRANSCRIPT_MARKS = 3
"""A harness transcript pasted into the user role (opencode's TUI lines "▣  Build · model",
"Thinking: …", "→ Read file"): harness output, not a request."""

TRANSCRIPT_END = re.compile(r"(?m)^▣\s+\w+ · [^\n]*\n?")
"""The footer opencode's TUI prints after each assistant turn ("▣  Build · Big Pickle · 1m
14s"): what a person typed after the last one of a pasted transcript is their own words."""

CODEX_REQUEST = re.compile(r"(?is)^.*?#+\s*my request for codex:?\s*\n")
"""Codex's IDE extension prefixes the person's words with context blocks and this heading."""

GATEWAY_PREFIX = re.compile(
    r"^\s*\[(?P<kind>uploaded|action|attachment|file|image)(?::[^\]]*)?\]\s*"
)
"""Messaging-gateway markers in front of the text (hermes gateway, chat bridges)."""

SPEAKER_TAG = re.compile(r"^\s*\[(?P<name>[^\[\]\n:=/\\#|<>{}]{1,40})\]\s+(?=\S)")
"""A speaker tag in front of a message: the hermes gateway writes ``[{user_name}] {text}`` in
shared chats, and chat bridges do the same. The tag is not the request; it is cut (and a line
of a pasted chat that starts with one is read as prose, not as pasted output)."""

NOT_SPEAKERS = words(
    """
    info warn warning error err debug trace fatal critical notice ok pass passed fail failed
    success done x todo wip note tip new message system assistant user tool
    """
)
"""Bracketed words that are log levels, check boxes or harness markers, never a speaker
(``[INFO] …``, ``[x] …``, ``[New message]``); a tag must also hold a letter and more than one
character."""

SPEAKER_MAX_WORDS = 3
"""A display name is at most this many words ("Mike Morgenstern"); longer is a notice."""

CHANNEL_CONTEXT = re.compile(r"(?s)^.*\n\[New message\]\n")
"""The hermes gateway puts a channel's recent history before the message that triggered the
agent, ending in ``[New message]``: the history is context, the request follows it."""

ATTACHMENT = re.compile(
    r"""(?xi)
    \[(?:image|screenshot|pasted\ image|file)\s*\#?\d*\]    # Claude Code / pi placeholders
  | \[uploaded:
  | \[media\ (?:attached|\d+/\d+)\b                          # OpenClaw's media note
  | (?:^|\s)@?(?:~|/Users/[^/\s]+|/home/[^/\s]+|[A-Z]:\\Users\\[^\\\s]+)
      [/\\](?:desktop|downloads|documents|pictures)[/\\]     # a file from the person's folders
  | \bscreen\s?shot\b[^\n]*\.(?:png|jpe?g|gif|webp)
  | /var/folders/\S+\.(?:png|jpe?g|gif|webp|pdf)           # macOS drag-and-drop temp files
    """
)
"""References to files attached from outside the workspace (live_state: the task cannot be
reproduced without them)."""

SLASH_COMMAND = re.compile(r"^\s*/[a-z][\w:-]*(?:\s+\S+){0,2}\s*$", re.IGNORECASE)
"""A bare harness command (``/exit``, ``/login``, ``/compact``, ``/model x``): never a task."""

# --- harness_error: the episode's outcome is a failure of the API or the harness --------

HARNESS_ERRORS = re.compile(
    r"""(?xi)
    \brequest\ timed\ out\b | \btimed\ out\ waiting\ for\b
  | \binvalid\ api\ key\b | \bplease\ run\ /login\b | \b(?:not\ )?logged\ in\b.*\blogin\b
  | \bapi\ key\ (?:is\ )?(?:missing|invalid|expired)\b | \bauthentication[_ ](?:failed|error)\b
  | \bout\ of\ (?:extra\ )?usage\b | \busage\ limit\b | \brate[\ -]limit(?:ed)?\b
  | \bquota\b | \bcredit\ balance\b | \binsufficient\ (?:credits?|funds|balance)\b
  | \boverloaded(?:_error)?\b | \bservice\ unavailable\b | \b(?:502|503|529)\b.*\berror\b
  | \binternal\ server\ error\b | \bapi\ error\b | \bconnection\ (?:error|refused|reset)\b
  | \bprompt\ is\ too\ long\b | \bcontext[\ _](?:length|window)\b | \bmaximum\ context\b
  | \btoo\ many\ tokens\b | \bmax(?:imum)?[\ _]tokens?\ (?:exceeded|reached)\b
  | \bhas\ hit\ its\ limit\b | \btool[\ -]call\ limit\b
  | \bmaximum\ number\ of\ (?:tool\ calls|turns|steps)\b
  | \binterrupted\ by\ (?:the\ )?user\b | \brequest\ (?:was\ )?(?:aborted|interrupted|cancell?ed)\b
  | \boperation\ (?:was\ )?aborted\b | \bno\ response\ from\ (?:the\ )?model\b
  | \bmodel\ (?:not\ found|is\ not\ available)\b | \bexecution\ error\b
    """
)
"""What API and harness failures say (timeouts, login, quota and credits, overload, context
length, tool-call limits, interruptions), as harnesses print them into the transcript."""

ERROR_ANSWER_CHARS = 400
"""A final message this short that matches HARNESS_ERRORS is the failure itself; a long one
may discuss such errors as part of real work (a rate limiter the person asked for)."""

# --- not_self_contained: acknowledgements, continuations, unresolved references ----------

ACK_WORDS = words(
    """
    ok okay k kk yes yeah yep yup sure fine cool nice great perfect good awesome thanks thank
    you thx ty lgtm continue go on ahead proceed keep going do it that this please pls now
    next again retry try redo and so then alright right correct exactly agreed sounds
    hi hello hey yo hiya morning wow amazing excellent yess yesss wonderful done same carry
    resume finish up with the rest one more time looks works working all everything another
    pass round second nd once
    """
)
"""Words a continuation or greeting is made of ("ok", "yes, do it", "try again", "continue
please", "2nd pass please", "hi"). A message made only of these (and numbers or
punctuation) says nothing new."""

OTHER_ACK_WORDS = words(
    """
    ja jo jepp ok oké okei fortsett fortsæt fortsätt gjør gör gør det weiter mach bitte danke
    sí si vale dale claro continúa continua sigue oui d'accord continue vas-y merci sim pode
    continuar obrigado obrigada да ага давай продолжай продолжи хорошо ладно спасибо tak dalej
    네 예 응 계속 계속해 계속해줘 좋아 좋아요 감사합니다 はい うん ええ 続けて お願いします
    """
)
"""Acknowledgements in other languages, written with spaces between words. Text in another
language is an ack only when it is made of these (and ACK_WORDS): by default it is not."""

UNSPACED_ACKS = words(
    "好 好的 行 可以 继续 繼續 请 請 是 是的 对 對 嗯 谢谢 謝謝 吧 开始 開始 没问题 沒問題 "
    "はい 続けて 続き お願い します お願いします ください 進めて どうぞ"
)
"""Acknowledgements in scripts written without spaces (Chinese, Japanese): a message is one
when it splits wholly into these ("好的，继续", "はい、続けてください")."""

ACK_MAX_WORDS = 8
"""Longer messages carry content even when every word is common."""

CONTINUATION_TAIL = re.compile(
    r"(?i)^(?:(?:ok|okay|yes|good|great|alright|nice)\W+)*(?:it'?s good\W+)?"
    r"(?:continue|go ahead|proceed|keep going|carry on|do it|go for it)\W*$"
)
"""'i reviewed what we have, it's good. continue' ends in a continuation: the last sentence
decides."""

PROPOSAL = re.compile(
    r"(?i)(?:\?\s*$|\b(?:want me to|shall i|should i|do you want|would you like|let me know if)\b)"
)
"""The assistant proposed something; an ack that follows approves work the person never
described, so the deliverable is not in the request."""

DEICTIC = re.compile(
    r"(?i)\b(?:this|that|it|these|those|them|they|(?<!\bno )such(?!\s+(?:as|that)\b))\b"
    r"(?!\s+(?:repo|repository|codebase|project|workspace|folder|directory|app|session|chat|"
    r"conversation)\b)"
)
"""Pronouns that may point back into the conversation ("fix it", "undo those", "any other such
pathing issues?", not "such as" or "no such file"). They dangle
only in a later, short turn that names no file or identifier (ANCHOR): "Fix the bug in calc.py
so that the tests pass" is fine, and a session's first request has nothing to point back to
("… and which setting controls it?"); "this repo" and its like name the workspace, "this
session" the conversation itself (what it asks is judged as a question about it)."""

STRONG_DEICTIC = re.compile(
    r"(?i)\b(?:again|same(?!(?:\s+\w+){0,2}\s+as\b)|previous|earlier|(?:as|like|than) before|"
    r"instead(?!\s+of\b)|actually|anymore|still(?!\s+(?:there|here|around|with me)\b)|the other|"
    r"above|you said|you did|what you|"
    r"like you|as you)\b"
)
"""Words that point back into the conversation even beside a file name ("the same for utils.py",
"calc.py still fails"); not the contrast "X instead of Y" or "before the loop", nor the
comparison "bullet should be same as inline code" (what it is the same as is named; "same as
before" still points back), nor "you still there?", which asks after the assistant. An "again"
whose action the request itself named just before ("use /theme to preview, modify, use /theme
again") repeats the request, not the conversation: a content word among the AGAIN_WINDOW words
before it was said earlier in the request."""
AGAIN_WINDOW = 2

BACK_REFERENCE = re.compile(
    r"(?i)\b(?:your (?:plan|change|changes|edit|edits|fix|code|approach|suggestion|proposal|"
    r"version|implementation|analysis|summary|list|idea)|you (?:just |already )?(?:did|made|"
    r"wrote|changed|added|removed|suggested|proposed|said)|(?:as|like) (?:you|we) (?:said|"
    r"discussed|did|agreed)|the (?:above|previous|last) (?:one|step|message|answer|plan|change)|"
    r"from (?:before|earlier)|where (?:were|are) we|where (?:we|you) left off|"
    r"th(?:is|at|ese) (?:plan|proposal|approach|suggestions?|ideas?|"
    r"list|analysis|summary|steps))\b"
)
"""References to the assistant's earlier output ("your plan", "as we discussed") or to where the
conversation stood ("alright, where were we?"), whatever the request's length: the task would
need the conversation."""

QUOTE_CHARS = 20
"""A request line this long found verbatim in the assistant's last message is a quote of it:
the turn replies to that message ("- selectSession() function … this belongs in …")."""

DEPENDENT_START = re.compile(
    r"(?i)^\s*(?:@[\w-]+\s+)?(?:(?:and|also|but|then|nvm|wait|actually|instead|undo|revert|same|"
    r"why (?:did|do|does|would) you|(?:once|when|after) "
    r"(?:done|finished|(?:you(?:'re| are)|that's) (?:done|finished))|after (?:that|this))\b|"
    r"no\s*[,.!:;-]|"
    r"no\s+(?:that|this|it|the|we|you|not)\b)"
)
"""Openings that continue the previous turn ('and a /scrape_doc command', 'undo those', 'once
done, commit', 'after you are done and commited, remove …'), also after an ``@agent`` mention
('@gitter Once done …')."""

SEQUENCE = re.compile(
    r"(?i)^\s*(?:and |also |then |after that,? |next,? )*(?:we need to|we should|let'?s)\b"
)
"""A turn that moves on to the next piece of work ("then we need to tackle this bash issue:
…"): with its subject named or pasted it stands alone."""

CHAT_OPENER = re.compile(
    r"(?i)^\s*(?:no|nope|nah|yes|yeah|yep|ok(?:ay)?|well|hm+|wait|btw|so+|oh|ah|aha|alright|"
    r"right|sure|actually|omfg|wtf|my dude|dude|ugh|lol|uh|um|great|good|nice|perfect|cool|"
    r"thanks)\b[\s,.!:;-]"
)
"""Openers of a later turn that answer the assistant. A correction ("no, the block should
stay", CORRECTION) steers its last turn and is dropped; after any other ("ok, …", "oh, …") the
rest of the message is judged on its own."""

CORRECTION = re.compile(r"(?i)^\s*(?:no|nope|nah|well|wait|actually|omfg|wtf|ugh)\b")
"""Openers that correct the assistant: what follows steers its last turn. Not "hmm": a person
musing before a new request ("hmmmm could we have a file watcher for the custom themes?",
"hmmm, the theme selector needs to push the update to the next tick") is not correcting; what
follows is judged on its own ("hmm, no, …" still corrects)."""

SOFT_CORRECTION = re.compile(r"(?i)^\s*(?:wait|actually)\b")
"""Correction openers a person also uses before a question of their own ("wait, do we only have
a single link color?"): what follows is judged on its own when it asks about the workspace."""

SECOND_PERSON = re.compile(r"(?i)\b(?:you|your|you'?re|you'?ve)\b")
"""Words that address the assistant: a question with them is about its last turn."""

DENIES_LAST = re.compile(
    r"(?i)^\s*(?:that|this|it)\S{0,3}\s*(?:is|was|s)?\s*"
    r"(?:not|n't|isn'?t|wasn'?t|doesn'?t|didn'?t)\b"
)
"""A short later turn opening by saying the assistant's last work is not it ("that's not the
system prompt. see main.ts", "this is not what i meant", "it doesn't work", typos between
the word and its ``'s`` included): what it asks for is the previous turn, set right."""

POLITE_REQUEST = re.compile(
    r"(?i)^\s*(?:(?:can|could|would|will) you|please|pls|can we|could we|let'?s|i want|"
    r"i'?d like|we need|how about (?:you|we) (?!\w+ing\b)|why (?:don'?t|not) (?:you|we))\b"
)
"""Questions that are requests for a change ("can you add some sfx?", "how about you kill the
entire file … and create a brand spanking new interactive-mode.ts?")."""

ANCHOR = re.compile(
    r"`[^`]+`|\"[^\"]+\"|\b[\w-]+\.[a-z]{1,5}\b|\b\w+/[\w./-]+|\b[a-z]+_[a-z_]+\b|"
    r"\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b|https?://\S+"
)
"""Something a short follow-up can stand on: a file, a path, a code name, a quoted value."""

NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
NAME_PART_CHARS = 2
"""A workspace file named in words anchors a request too: the words of a file's name
(``theme-selector.ts``, ``user_message.py``, ``RecordingStore.swift``), when it has two or more
of at least NAME_PART_CHARS letters, written in a row ("the theme selector needs to push the
update to the next tick"). A one-word name ("theme", "index") is a common word, never one."""

CODE_NAME = re.compile(r"\b(?:[a-z]+(?:[A-Z][a-z]+)+|(?:[A-Z][a-z]+){2,}|[a-z]+(?:_[a-z]+)+)\b")
CODE_NAME_PARTS = 4
CODE_NAME_CHARS = 3
"""An identifier in the workspace's code (``thinkingLevel``, ``ThinkingLevel``,
``thinking_level``) of two to CODE_NAME_PARTS parts of at least CODE_NAME_CHARS letters, none a
function word, anchors a short follow-up that says it in words ("our themes need explicit
tokens for the thinking level border of editor"): the request names what it changes."""

PASTED_LINE = re.compile(
    r"^\s*(?:$|[➜$#>│|]|\[\w|at\s|\d+\s*[│|]|\w+:\d+|\s*[\^~]+\s*$|npm (?:err|warn)|"
    r"error|warning|traceback|file \")",
    re.IGNORECASE,
)
"""Lines of pasted terminal output (prompts, logs, stack traces, diagnostics)."""

# --- words in any script, and which text the English rules can read ------------------

UNSPACED_SCRIPTS = (
    (0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF),  # Thai, Lao; Myanmar; Khmer
    (0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F),  # Hiragana, Katakana
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FFFF),  # CJK
)  # fmt: skip
"""Scripts written without spaces between words: a run of them is counted by characters."""

CHARS_PER_WORD = 2
"""Characters of an unspaced script that make one word (a Chinese word is one to two
characters, most often two): "把按钮的颜色改成蓝色" is 5 words, not 1."""

ENGLISH_MARKERS = words(
    """
    the a an to of in on for with from by at into about is are was were be been it its this
    that these those i i'm we you my our your me us and or but not do does did can could would
    should will what which where when who why how if then so as there here all any some also
    only just please
    """
)
"""English function words. The rules that read meaning (questions, polite requests,
continuations, pointing back) are English; a text is English when these are at least as
many as FOREIGN_MARKERS and, from ENGLISH_MIN_WORDS words on, present at all."""

FOREIGN_MARKERS = words(
    """
    og er jeg det ikke på til som av med kan du vi har meg hva hvordan hvorfor att och inte är
    för vad hur und ist nicht ich der das ein eine zu von auf für wie warum kannst bitte el
    los las del que por para una es está como pero lo le se qué cómo puedes les des du et est
    une pour avec pas qui dans sur je tu il nous vous peux não um uma é você pode gli della che
    non è sono puoi het een niet ik voor dat wat waarom kun nie jest się że czy jak
    """
)
"""Function words of other languages written in Latin letters (Norwegian, Swedish, Danish,
German, Spanish, French, Portuguese, Italian, Dutch, Polish) that are not English words."""

ENGLISH_MIN_WORDS = 4
"""From this many words on, a text with no English function word is not English."""

FOREIGN_SCRIPT_SHARE = 0.5
"""A text whose words are mostly in another script (Cyrillic, Greek, CJK, Arabic, …) is not
English, whatever Latin words it quotes."""

CODE_TOKEN = re.compile(r"`[^`]*`|\S*[/\\._@#=<>{}()\[\]$:]\S*|\b\w*\d\w*\b")
"""Code spans, paths, identifiers and numbers: not words of the language the text is in."""

QUOTED_PROSE_WORDS = 4
QUOTED_PROSE_SHARE = 0.75
"""A line behind ``> `` (a pasted spec or an e-mail quote) or a speaker tag is prose, not
pasted output, when it has at least QUOTED_PROSE_WORDS words and that share of its tokens
(not counting numbers and lone symbols) are plain words: "> Pick up item 5 first. Add a
narrow demo, isolated from the main flow." is prose; "> biome check --write . && tsgo" is a
command echoed by npm."""

MIN_REQUEST_WORDS = 3
"""Fewer words than this ("f0c674", "ls") cannot state a task."""

MIN_PROSE_WORDS = 8
"""Pasted output ("➜ git:(main) npx tsx … [theme] Detected …") with fewer words of the
person's own around it does not say what to do with it."""

SHORT_REQUEST_WORDS = 25
"""A request this short that points back (DEICTIC, DEPENDENT_START) without naming a file,
identifier or value cannot be understood alone; longer ones usually restate their subject."""

AT_MENTION = re.compile(r"(?<![\w/])@(?P<ref>[~\w./-]*[\w/])")
"""``@path`` references (opencode, pi and Claude Code attach files this way) and ``@agent``
mentions of harness sub-agents."""

NPM_PACKAGE = re.compile(r"[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._-]*")
NOT_PACKAGE = re.compile(r"\.(?:[cm]?[jt]sx?|json|md|mdx|py|rs|go|css|html|ya?ml|toml|txt|sh)$")
"""``@scope/name`` that is no workspace path is an npm scoped package (``@ai-sdk/react``,
``@mariozechner/pi-tui``), not an attached file: lower case, one slash, no file suffix."""
