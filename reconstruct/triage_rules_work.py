"""Every list, pattern and threshold triage uses to judge an episode's *work*, each saying why.

:mod:`.triage_rules` holds the rules that read what the person wrote; these read what the
session did: which tool calls reach outside the workspace and whether that outside effect is
the deliverable (``live_state``), which folders the session worked in (its workspace roots),
and which changed files are documentation or configuration rather than source
(``docs_only``). Like the text rules, they were written from the real dumps in
``../shared/corpus`` and name classes of calls and files, not single sessions.
"""

from __future__ import annotations

import re

from trajforge.reconstruct.triage_rules import words

# --- live_state: is the outside effect the deliverable? --------------------------------
#
# A call that reaches outside the workspace is one of three kinds:
#   effect  — it changes a host, the machine, an account or a service (deploy, restart a
#             service, install system packages, write a database, change OS settings, write
#             files outside the workspace). Its result is live state, whatever else the
#             episode did: the episode is dropped.
#   publish — it hands the workspace's result to a remote (git push, npm publish, a pull
#             request). The result is still the workspace's code: the step does not decide.
#   observe — it reads live state (logs, status, a docs page, a remote's branches) or runs
#             the person's own app to look at it (open, pkill/killall of a dev process,
#             local containers). A check, not the deliverable.
# Publishing and observing drop an episode only when it changed no workspace file: then its
# only result is the remote's or the machine's state (a pure "push it", "check the logs").

EFFECT_PROGRAMS = words(
    """
    scp sftp rsync mosh telnet ftp sshpass
    systemctl service launchctl crontab ufw iptables nft firewall-cmd
    apt apt-get dpkg yum dnf pacman apk snap port choco winget scoop brew
    defaults osascript shutdown reboot mount umount diskutil networksetup scutil
    dscacheutil hostnamectl timedatectl pmset tccutil
    aws gcloud gsutil az vercel netlify fly flyctl heroku railway render wrangler firebase
    supabase doctl kubectl helm terraform pulumi ansible ansible-playbook eksctl
    """
)
"""Programs that change a host, the machine's configuration, an account or a cloud service:
remote copies, services and schedulers, firewalls, system package managers, OS settings,
cloud and hosting CLIs, cluster and infrastructure tools. Read-only uses (READ_VERBS) only
observe."""

READ_VERBS = words(
    """
    status show list ls get describe logs log tail top info inspect view print read cat
    search whoami version help doctor config plan validate fmt lint diff history outputs
    output is-active is-enabled list-units list-timers dev emulators:start
    """
)
"""Subcommands with which an EFFECT_PROGRAM only reads (``systemctl status``, ``kubectl get``,
``terraform plan``, ``brew services list``, ``aws s3 ls``, ``fly logs``) or runs a local
emulator (``wrangler dev``): observing, not changing. One of the first READ_DEPTH words after
the program decides (cloud CLIs put the verb after a service name); ``describe-*``, ``list-*``
and ``get-*`` verbs read too."""

READ_DEPTH = 3

READ_FLAGS = words("-l -L --list --version -v -h --help --status")
"""Flags that make a bare EFFECT_PROGRAM read (``crontab -l``, ``iptables -L``)."""

WRAPPERS = words("npx bunx pnpx")
"""Package runners: the command they run is judged (``npx vercel deploy`` is an effect)."""

PRIVILEGE = words("sudo doas su")
"""Privilege: what runs as root changes the machine, whatever the program (``sudo apt-get
install``, ``sudo chown -R me /usr/local``)."""

SSH_VALUE_FLAGS = words("-i -p -l -o -F -J -L -R -D -E -b -c -e -m -O -Q -S -W -w -B")
"""ssh options followed by a value (``ssh -i key.pem -p 2222 me@host cmd``)."""

SHELLS = words("bash sh zsh dash fish")
"""``bash -c "…"``: the quoted command is judged."""

REMOTE_SHELLS = words("ssh")
"""A remote shell. The command it runs on the host observes only when every program in it
reads (REMOTE_READS: ``ssh prod 'tail -n 50 app.log'``); anything else run on a host
(``pm2 restart``, ``git pull && npm run build``) and an interactive login are effects."""

REMOTE_READS = words(
    "cat tail head less more ls grep rg find journalctl ps df du free uptime whoami hostname "
    "uname top stat wc echo date pwd which id printenv env docker systemctl git kubectl cd "
    "sleep true test"
)
"""Programs that only read on a host (for docker, systemctl, git and kubectl: with a read
verb, READ_VERBS or GIT_READS)."""

GIT_READS = words("log status show diff branch rev-parse remote fetch ls-files")

REMOTE_SPEC = re.compile(r"^(?:[\w.-]+@)?[\w.-]+:")
"""``host:path`` in an ``rsync`` argument: a copy to or from a host (a local ``rsync -a src/
dist/`` is not live)."""

OBSERVE_PROGRAMS = words(
    "docker podman docker-compose open xdg-open pkill killall kill codesign spctl xattr journalctl"
)
"""Programs that run or look at the person's own build on the machine (local containers,
opening the app or a page, stopping a dev process, signing a local build, reading system
logs). Their pushes (``docker push``) publish; the rest observes."""

DATABASE_CLIENTS = words("psql mysql mariadb mongosh mongo redis-cli sqlcmd clickhouse-client")
"""Database shells: a query observes, a statement that writes (DATABASE_WRITE) is an effect
(data written into a database is not in the workspace)."""

DATABASE_WRITE = re.compile(
    r"(?i)\b(?:insert\s+into|update\s+\w+\s+set|delete\s+from|create\s+(?:table|database|"
    r"index|user|role|schema|extension)|drop\s+(?:table|database|index|schema)|alter\s+table|"
    r"truncate|grant|revoke|copy\s+\w+\s+from|flushall|flushdb|insertone|insertmany|"
    r"updateone|updatemany|deleteone|deletemany)\b|\s-f\s|\\i\s|(?:^|\s)(?:set|del|hset|lpush|"
    r"rpush|sadd|zadd|expire)\s"
)
"""SQL and shell statements that write data, and running a script file into the database."""

PUBLISH_SUBCOMMANDS = {
    "git": frozenset({"push"}),
    "npm": frozenset({"publish", "login", "adduser", "deprecate", "unpublish"}),
    "pnpm": frozenset({"publish"}),
    "yarn": frozenset({"publish", "npm"}),
    "cargo": frozenset({"publish", "login"}),
    "twine": frozenset({"upload"}),
    "uv": frozenset({"publish"}),
    "docker": frozenset({"push", "login"}),
    "podman": frozenset({"push", "login"}),
    "gh": frozenset({"pr", "release"}),
    "glab": frozenset({"mr", "release"}),
}
"""Subcommands that hand the workspace's result to a remote or a registry."""

RUN_SCRIPTS = frozenset({"npm", "pnpm", "yarn", "bun"})
RELEASE_SCRIPTS = frozenset({"publish", "release", "deploy"})
"""``npm run publish``: a project's own script of that name publishes (pi-mono's runs
``npm publish -ws``)."""

_RUNNERS, _SCRIPTS = "|".join(sorted(RUN_SCRIPTS)), "|".join(sorted(RELEASE_SCRIPTS))
RELEASES = re.compile(
    rf"`(?:(?:{_RUNNERS}) (?:publish|run (?:{_SCRIPTS}))|cargo publish|twine upload|uv publish|"
    r"(?:docker|podman) push|(?:gh|glab) release)\b"
)
"""Publish calls (their label) that are a release: a package, an image or a forge release
handed out. A ``git push`` hands over commits, and a pull request asks for review: neither is
the release itself."""

TAG_PUSH = re.compile(r"\bgit\s+push\b[^|;&\n]*\s(?:--tags\b|(?:refs/tags/)?v\d+(?:\.\d+)+\S*)")
"""A version tag pushed (``git push origin v0.8.0``, ``git push --tags``): a release a
forge or its CI hands out, where a plain ``git push`` only hands over commits."""

OBSERVE_SUBCOMMANDS = {
    "git": frozenset({"pull", "fetch", "clone", "ls-remote", "remote", "submodule"}),
    "pip": frozenset({"download"}),
}
"""Subcommands that read a remote (its branches, a clone of it, a package)."""

GIT_REMOTE_READS = words("show update prune")
"""``git remote`` reads a remote only through these; ``git remote -v`` / ``add`` / ``set-url``
list or edit the repository's own config (a grant application that only ran ``git remote -v``
had been dropped as reading live state)."""

EFFECT_SUBCOMMANDS = {
    "cargo": frozenset({"install"}),
    "gh": frozenset({"issue", "repo", "secret", "variable", "gist", "workflow", "label"}),
    "glab": frozenset({"issue", "repo", "variable"}),
}
"""Subcommands that change the machine or an account: a tool installed for the user, a forge's
issues, repositories, secrets (``gh api`` changes one only with a method or fields,
REMOTE_WRITE)."""

GITHUB_READS = words("view list status diff checks browse")
"""``gh pr view``, ``gh issue list``: reading the forge, not changing it."""

MACHINE_INSTALL = re.compile(
    r"\b(?:npm|pnpm|yarn|bun)\s+(?:install|i|add)\s+(?:\S+\s+)*-g\b|\bglobal\s+add\b|"
    r"\bpip3?\s+install\s+(?:\S+\s+)*--user\b|\bpipx\s+install\b|\bgo\s+install\b"
)
"""Installs of tools for the user (``npm install -g``, ``pip install --user``, ``pipx``,
``go install``): the machine's tools, not the project's dependencies."""

REMOTE_URL = re.compile(
    r"\b(?:curl|wget|http|https|httpie|xh)\b[^|;&\n]*\bhttps?://(?!localhost|127\.|0\.0\.0\.0|"
    r"\[::1\])"
)
"""Requests to remote hosts: their answers are someone else's live state."""

REMOTE_WRITE = re.compile(
    r"(?i)(?:\s-X\s*(?:POST|PUT|PATCH|DELETE)\b|\s--request\s+(?:POST|PUT|PATCH|DELETE)\b|"
    r"\s(?:-d|--data(?:-\w+)?|--json|-F|--form|-T|--upload-file|--post-data|--post-file)\b|"
    r"\b(?:http|https|xh)\s+(?:POST|PUT|PATCH|DELETE)\b)"
)
"""A request that sends data (POST, PUT, a form, an upload): a call that changes a service."""

LIVE_TOOLS = frozenset(
    {"webfetch", "web_fetch", "websearch", "web_search", "web_search_call", "browser", "fetch"}
)
"""Harness tools that read the web or drive a browser: they observe (a docs page)."""

DELEGATION_TOOLS = frozenset({"task", "agent", "subagent", "delegate_task", "spawn_agent"})
"""Harness tools that hand work to a sub-agent; its own edits are not in this session."""

WORKSPACE_TOOLS = words(
    """
    glob grep ls list find search codesearch codebase_search list_dir list_directory
    list_files search_files find_files read_many_files lsp diagnostics
    todowrite todoread todo_write todo update_plan think skill
    """
)
"""Harness tools that look through the workspace or keep the agent's own notes (its plan, a
skill): no replay effect, and no service either. A session that calls only a service's tools
(a chat, a sheet, a mailbox) never touches a workspace; one that calls these may."""

PATH_ARGUMENTS = words(
    "path paths file_path filepath filePath file files dir directory cwd workdir target_file "
    "notebook_path absolute_path relative_path"
)
"""Argument names that point a tool at files: a tool given one works on a folder."""

EFFECT_REQUEST = re.compile(
    r"(?i)\bdeploy\w*\b|\brelease to\b|\brestart\b|\breboot\b|\binstall (?:it )?on my\b|"
    r"\bssh (?:in|into|to)\b|\blog ?in to\b|\bmy (?:mac|machine|laptop|computer|phone|server|"
    r"system)\b|\bsystem (?:settings|preferences)\b|\bapplications folder\b|\blogin items\b|"
    r"\bat (?:system )?start ?up\b|\bcrontab\b"
)
"""Requests for an effect on the person's machine, a host or a service. Alone (no workspace
file changed) they are live; beside changed files they are live only when the episode
performed such an effect (an effect call, or a push or publish that carried it out: "fix
it and deploy" done by pushing to a deploying branch)."""

RELEASE_REQUEST = re.compile(
    r"(?i)\b(?:release|publish|ship|cut) (?:a |the )?(?:new )?(?:version|release)\b|"
    r"\bcut a release\b|\bdo (?:a|the) release\b|\bready to release\b|\bnpm publish\b"
)
"""Requests for a release ("ok, i believe we are ready to release a new version, aren't we?
… read README.md that details everything"). Beside changed files they are live when the
episode carried a release out (``triage_live.released``): the release is the deliverable, the
version bump and changelog its steps."""

PUBLISH_REQUEST = re.compile(
    r"(?i)\bgit push\b|\bpush (?:it|this|that|them|everything|the (?:changes|commits?|branch|"
    r"code|repo))\b|\bpush(?:ed)? to (?:github|gitlab|origin|main|master|the remote|remote|"
    r"prod(?:uction)?)\b|\bpublish (?:it|this|to|the package)\b"
)
"""Requests to publish the result. Alone they are live (a "push it" changes only the remote);
beside changed files the changes are the deliverable and publishing is a step."""

LIVE_DATA_REQUEST = re.compile(
    r"(?im)^\W*(?:(?:please|pls|can you|could you|now)\s+)?(?:post|send|upload|insert|import|"
    r"seed|tweet|email|notify|sync)\b(?:[^.\n]|\.(?=\S))*\b(?:database|db|table|prod(?:uction)?|staging|"
    r"slack|discord|telegram|twitter|mailing list|s3|bucket|gcs|google drive|notion|airtable|"
    r"spreadsheet|google sheets?|jira|linear|crm)\b"
)
"""Requests whose deliverable is data in a live service ("import the CSV into the prod
database", "post the release notes to Slack"). When the episode ran a script it wrote for
it, that glue's only output is calls to the service: live."""

# --- workspace roots: where the session works ------------------------------------------

MACHINE_DIRS = re.compile(
    r"^(?:/|/(?:tmp|private|etc|var|usr|opt|bin|sbin|dev|proc|sys|Library|System|Applications|"
    r"srv|nix|snap)(?:/.*)?|(?:/Users/[^/]+|/home/[^/]+|/root)(?:/(?:Library|Applications|"
    r"Downloads)(?:/.*)?)?|.*/\.[^/]+(?:/.*)?)$"
)
"""Folders that are the machine, not a project: system folders (``/var/www`` is a server's,
not a workspace), a home folder itself, its Library, Applications and Downloads, and anything
under a hidden folder (``~/.config``, ``~/.pi/agent``). The session moving there never makes
them a workspace root. (The header's own cwd is the workspace whatever it is: replay
resolves paths against it.)"""

SCRATCH_DIRS = re.compile(r"^/(?:private/)?(?:tmp|var/tmp|var/folders)(?:/|$)")
"""Temporary folders: a command that writes a scratch file or a log there (``> /tmp/out.txt``,
a clone to inspect) leaves nothing the person keeps. Anywhere else outside the workspace
(``~/.config``, ``~/.pi/agent/themes``, ``/Applications``) a written file is live state."""

# --- docs_only: changed files that are not source --------------------------------------

DOC_SUFFIXES = words(
    ".md .mdx .markdown .txt .text .rst .adoc .asciidoc .org .rtf .pdf .doc .docx .odt .tex"
)
"""Documentation and prose."""

CONFIG_SUFFIXES = words(
    """
    .json .jsonc .json5 .yml .yaml .toml .ini .cfg .conf .properties .env .lock .plist .xml
    .csv .tsv .editorconfig .gitignore .gitattributes .gitmodules .dockerignore .npmignore
    .prettierignore .eslintignore .npmrc .nvmrc .yarnrc .prettierrc .eslintrc .babelrc
    .browserslistrc .tool-versions .python-version .node-version .ruby-version .mailmap
    .png .jpg .jpeg .gif .webp .ico .icns .bmp .tiff .svg .woff .woff2 .ttf .otf .eot
    .mp3 .wav .ogg .mp4 .mov .webm
    """
)
"""Configuration (settings, manifests, CI workflows), data tables, and assets (images,
fonts, media). ``package.json``, ``tsconfig.json``, ``pyproject.toml`` and
``.github/workflows/*.yml`` change how code is built or run, not the code."""

DOC_NAMES = words(
    """
    license licence copying notice authors contributors changelog changes history readme
    codeowners owners maintainers todo security code_of_conduct contributing funding citation
    package-lock.json yarn.lock pnpm-lock.yaml bun.lockb bun.lock cargo.lock poetry.lock
    uv.lock pipfile.lock gemfile.lock composer.lock go.sum flake.lock mix.lock pubspec.lock
    podfile.lock packages.lock.json go.mod go.work gemfile pipfile podfile procfile
    requirements.txt constraints.txt
    """
)
"""Files known by name (without suffix, lower case, e.g. ``LICENSE``, ``LICENSE-MIT``,
``CHANGELOG``): licences, project docs, lockfiles and dependency manifests."""

CODE_NAMES = words(
    "makefile gnumakefile dockerfile containerfile justfile rakefile vagrantfile jenkinsfile "
    "cmakelists.txt build build.bazel workspace"
)
"""Build files that are programs: a Makefile's or justfile's recipes and a Dockerfile's
``RUN`` steps are shell code that runs, so a change to them is a coding change (any file in
a programming language counts the same way: ``vite.config.ts``, ``.eslintrc.js``,
``setup.py``, shell scripts). ``Dockerfile.dev`` and ``app.dockerfile`` count too."""
