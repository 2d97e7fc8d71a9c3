"""Every word list, pattern and threshold triage uses, in one place, each saying why.

Triage (:mod:`trajforge.reconstruct.triage`) decides which session episodes are tasks at all.
The rules are deterministic and read only the session. They were written from what real dumps
hold (``../shared/corpus``: Claude Code, Codex, opencode, pi; the hermes gateway's nudges) and
name classes of text, not single files. Precision comes first: when a rule is unsure it drops,
with a reason from :class:`trajforge.records.Reason`.
"""

from __future__ import annotations

import re


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

CODEX_REQUEST = re.compile(r"(?is)^.*?#+\s*my request for codex:?\s*\n")
"""Codex's IDE extension prefixes the person's words with context blocks and this heading."""

GATEWAY_PREFIX = re.compile(
    r"^\s*\[(?P<kind>uploaded|action|attachment|file|image)(?::[^\]]*)?\]\s*"
)
"""Messaging-gateway markers in front of the text (hermes gateway, chat bridges)."""

ATTACHMENT = re.compile(
    r"""(?xi)
    \[(?:image|screenshot|pasted\ image|file)\s*\#?\d*\]    # Claude Code / pi placeholders
  | \[uploaded:
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
    r"(?i)\b(?:this|that|it|these|those|them|they)\b"
    r"(?!\s+(?:repo|repository|codebase|project|workspace|folder|directory|app)\b)"
)
"""Pronouns that may point back into the conversation ("fix it", "undo those"). They dangle
only in a later, short turn that names no file or identifier (ANCHOR): "Fix the bug in calc.py
so that the tests pass" is fine, and a session's first request has nothing to point back to
("… and which setting controls it?"); "this repo" and its like name the workspace."""

STRONG_DEICTIC = re.compile(
    r"(?i)\b(?:again|same|previous|earlier|(?:as|like|than) before|instead(?!\s+of\b)|"
    r"actually|anymore|still|the other|above|you said|you did|what you|like you|as you)\b"
)
"""Words that point back into the conversation even beside a file name ("the same for
utils.py", "calc.py still fails"); not the contrast "X instead of Y" or "before the loop"."""

BACK_REFERENCE = re.compile(
    r"(?i)\b(?:your (?:plan|change|changes|edit|edits|fix|code|approach|suggestion|proposal|"
    r"version|implementation|analysis|summary|list|idea)|you (?:just |already )?(?:did|made|"
    r"wrote|changed|added|removed|suggested|proposed|said)|(?:as|like) (?:you|we) (?:said|"
    r"discussed|did|agreed)|the (?:above|previous|last) (?:one|step|message|answer|plan|change)|"
    r"from (?:before|earlier)|th(?:is|at|ese) (?:plan|proposal|approach|suggestions?|ideas?|"
    r"list|analysis|summary|steps))\b"
)
"""References to the assistant's earlier output ("your plan", "as we discussed"), whatever the
request's length: the task would need the conversation."""

QUOTE_CHARS = 20
"""A request line this long found verbatim in the assistant's last message is a quote of it:
the turn replies to that message ("- selectSession() function … this belongs in …")."""

DEPENDENT_START = re.compile(
    r"(?i)^\s*(?:(?:and|also|but|then|nvm|wait|actually|instead|undo|revert|same|"
    r"why (?:did|do|does|would) you)\b|no\s*[,.!:;-]|no\s+(?:that|this|it|the|we|you|not)\b)"
)
"""Openings that continue the previous turn ('and a /scrape_doc command', 'undo those')."""

CHAT_OPENER = re.compile(
    r"(?i)^\s*(?:no|nope|nah|yes|yeah|yep|ok(?:ay)?|well|hm+|wait|btw|so+|oh|ah|aha|alright|"
    r"right|sure|actually|omfg|wtf|my dude|dude|ugh|lol|uh|um|great|good|nice|perfect|cool|"
    r"thanks)\b[\s,.!:;-]"
)
"""Openers of a later turn that answer the assistant. A correction ("no, the block should
stay", CORRECTION) steers its last turn and is dropped; after any other ("ok, …", "oh, …") the
rest of the message is judged on its own."""

CORRECTION = re.compile(r"(?i)^\s*(?:no|nope|nah|well|hm+|wait|actually|omfg|wtf|ugh)\b")
"""Openers that correct the assistant: what follows steers its last turn."""

POLITE_REQUEST = re.compile(
    r"(?i)^\s*(?:(?:can|could|would|will) you|please|pls|can we|could we|let'?s|i want|"
    r"i'?d like|we need)\b"
)
"""Questions that are requests for a change ("can you add some sfx?")."""

ANCHOR = re.compile(
    r"`[^`]+`|\"[^\"]+\"|\b[\w-]+\.[a-z]{1,5}\b|\b\w+/[\w./-]+|\b[a-z]+_[a-z_]+\b|"
    r"\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b|https?://\S+"
)
"""Something a short follow-up can stand on: a file, a path, a code name, a quoted value."""

PASTED_LINE = re.compile(
    r"^\s*(?:$|[➜$#>│|]|\[\w|at\s|\d+\s*[│|]|\w+:\d+|\s*[\^~]+\s*$|npm (?:err|warn)|"
    r"error|warning|traceback|file \")",
    re.IGNORECASE,
)
"""Lines of pasted terminal output (prompts, logs, stack traces, diagnostics)."""

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

# --- live_state: the deliverable depends on state outside the workspace ----------------

LIVE_PROGRAMS = words(
    """
    ssh scp sftp rsync mosh telnet ftp sshpass
    sudo doas su systemctl service launchctl journalctl crontab ufw iptables nft firewall-cmd
    brew apt apt-get dpkg yum dnf pacman apk snap port choco winget scoop defaults osascript
    open xdg-open killall pkill shutdown reboot mount umount diskutil networksetup
    scutil dscacheutil hostnamectl timedatectl pmset tccutil codesign spctl xattr
    aws gcloud gsutil az gh glab vercel netlify fly flyctl heroku railway render wrangler
    firebase supabase doctl kubectl helm terraform pulumi ansible eksctl
    docker podman docker-compose
    psql mysql mongosh redis-cli
    """
)
"""Programs whose effect or output is the machine, a remote host, an account or a service:
remote shells, privilege, services, system package managers, OS settings, process control,
cloud and hosting CLIs, containers and databases. Their results cannot be re-made offline in
a fresh workspace."""

LIVE_SUBCOMMANDS = {
    "git": frozenset({"push", "pull", "fetch", "clone", "ls-remote", "remote", "submodule"}),
    "npm": frozenset({"publish", "login", "adduser", "deprecate", "unpublish"}),
    "pnpm": frozenset({"publish"}),
    "yarn": frozenset({"publish", "npm"}),
    "cargo": frozenset({"publish", "login", "install"}),
    "pip": frozenset({"download"}),
    "twine": frozenset({"upload"}),
    "uv": frozenset({"publish"}),
}
"""Subcommands that reach a remote (git remotes, publishing to registries)."""

GLOBAL_INSTALL = re.compile(
    r"\b(?:npm|pnpm|yarn|bun)\s+(?:install|i|add)\s+(?:\S+\s+)*-g\b|\bglobal\s+add\b"
)
"""``npm install -g``: the machine's global tools, not the project."""

REMOTE_URL = re.compile(
    r"\b(?:curl|wget|http|httpie|xh)\b[^|;&\n]*\bhttps?://(?!localhost|127\.|0\.0\.0\.0|\[::1\])"
)
"""Requests to remote hosts: their answers are someone else's live state."""

LIVE_TOOLS = frozenset(
    {"webfetch", "web_fetch", "websearch", "web_search", "web_search_call", "browser", "fetch"}
)
"""Harness tools that read the web or drive a browser."""

DELEGATION_TOOLS = frozenset({"task", "agent", "subagent", "delegate_task", "spawn_agent"})
"""Harness tools that hand work to a sub-agent; its own edits are not in this session."""

LIVE_REQUEST = re.compile(
    r"(?i)\bgit push\b|\bpush (?:it|this|that|them|everything|the (?:changes|commits?|branch|"
    r"code|repo))\b|\bpush(?:ed)? to (?:github|gitlab|origin|main|master|the remote|remote|"
    r"prod(?:uction)?)\b|\bdeploy\w*\b|\bpublish (?:it|this|to|the package)\b|\brelease to\b|"
    r"\brestart\b|\breboot\b|\binstall (?:it )?on my\b|\bssh (?:in|into|to)\b|\blog ?in to\b|"
    r"\bmy (?:mac|machine|laptop|computer|phone|server|system)\b|\bsystem (?:settings|"
    r"preferences)\b|\bapplications folder\b|\blogin items\b|\bat (?:system )?start ?up\b|"
    r"\bcrontab\b"
)
"""Requests that ask for an effect on the person's machine, a host or a remote."""

# --- qa: questions and checkable answers -------------------------------------------------

QUESTION = re.compile(
    r"""(?xi)
    \?\s*$
  | ^\s*(?:what|which|where|when|who|whom|whose|how|why|list|show\ me|tell\ me|find|count
          |give\ me|name|explain|describe|summari[sz]e|check\ (?:if|whether|what|which|how))\b
    """
)
"""A request that asks for information: it ends with a question mark, or opens with a
question word or an information verb."""

NOT_CHECKABLE_REQUEST = re.compile(
    r"(?i)\b(?:what do you think|your (?:opinion|thoughts|take)|should (?:we|i)|would it be "
    r"better|which is better|pros and cons|recommend|suggest|propose|plan|design|brainstorm|"
    r"ideas?|walk me through|how (?:would|should|could) (?:we|i|you)|can we|could we|"
    r"is it possible|any way|(?:did|have|has|were|are) you|are we|you still)\b"
)
"""Opinion, advice and planning, and questions about the assistant's own doings ("did you
update…?"): nothing a fixed answer key over the workspace could check."""

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

MIN_REQUIRED_FACTS = 1
"""A qa task needs at least one grounded fact its answer must state."""
MAX_REQUIRED_FACTS = 3
"""At most this many facts are required: the ones the question asks for, first stated."""
