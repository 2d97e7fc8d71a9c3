"""The rule detector: tool call → effects → rule findings → one decision, with rollout state."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajforge.guard.calls import call_effects
from trajforge.guard.effects import MAX_REMEMBERED_FILE, Effect, RolloutState
from trajforge.guard.profile import Profile, changed_files
from trajforge.guard.rules import Bundle, MatchContext, Rule, compile_rules, load_bundle, match
from trajforge.protocols import GuardDecision
from trajforge.scrub import Scrubber

log = logging.getLogger(__name__)
_BUNDLES: dict[Path, Bundle] = {}
ALLOW_REASON = "no rule matched"
# User and password in a URL to a host reserved for documentation (RFC 2606: example.com /
# .org / .net, *.example, *.test, *.invalid) are an example, never a live credential:
# ``http://username:password@proxy.example.com:8080`` in a README is no literal secret.
DOC_URL_CREDENTIALS = re.compile(
    r"(?i)(?<=://)[^\s/@\"'<>]+@(?=(?:[\w-]+\.)*(?:example\.(?:com|org|net)|example|test|invalid)"
    r"(?:[:/\s\"'<>]|$))"
)


def bundle_at(path: Path | None = None) -> Bundle:
    """The bundle at ``path`` (default bundle when None), loaded once per process."""
    from trajforge.guard.rules import DEFAULT_BUNDLE

    key = (path or DEFAULT_BUNDLE).resolve()
    if key not in _BUNDLES:
        _BUNDLES[key] = load_bundle(key)
    return _BUNDLES[key]


@dataclass(frozen=True)
class Finding:
    """One rule that matched one effect of a call."""

    rule: Rule
    severity: str
    effect: Effect | None
    note: str

    def reason(self) -> str:
        where = ""
        if self.effect is not None:
            where = f"{self.effect.kind} {self.effect.target}"
            if self.effect.via:
                where += f" (via {self.effect.via})"
            where += ": "
        return f"{where}{self.note or self.rule.rationale}"


class RuleDetector:
    """Detector for one rollout, driven by a versioned rule bundle and the task's protected set."""

    name = "rules"

    def __init__(
        self, profile: Profile | None = None, bundle: Bundle | None = None, cwd: str | None = None
    ) -> None:
        self.bundle = bundle or bundle_at()
        self.bundle_version = self.bundle.version
        self.profile = profile or Profile()
        self.state = RolloutState(cwd=cwd or self.profile.workspace, home=self.profile.home)
        self.protected = self.profile.protected()
        self.decisions: list[GuardDecision] = []
        self._scrub = Scrubber()
        self._tokens = self._protected_tokens()
        self._rules = compile_rules(self.bundle.rules, self.state.home)
        self._specials = {r.special: r for r in self.bundle.rules if r.special is not None}

    @property
    def blocked(self) -> bool:
        """True once any call (or output, or the integrity check) was blocked."""
        return any(d.decision == "block" for d in self.decisions)

    def check(self, tool: str, arguments: Mapping[str, Any], harness: str = "") -> GuardDecision:
        """Decide one proposed tool call."""
        cwd_before = self.state.cwd
        try:
            effects = call_effects(self.state, tool, arguments, harness)
        except (RecursionError, ValueError, TypeError) as exc:
            log.debug("could not analyse %s call", tool, exc_info=True)
            effects = [Effect("unparsed", tool, detail=f"{type(exc).__name__}: {exc}")]
        creating = {
            e.target
            for e in effects
            if e.kind == "write"
            and e.whole
            and e.target not in self.state.seen
            and e.target not in self.protected
        }
        findings = self._findings(effects, frozenset(self.state.created | creating))
        findings += self._special_findings(effects, arguments)
        decision = self._decide(findings)
        if decision.decision == "block":
            self.state.cwd = cwd_before  # the harness never runs it
        else:
            self._remember(effects, creating)
        self.decisions.append(decision)
        return decision

    def check_output(self, text: str) -> GuardDecision:
        """Decide one tool output: a literal secret that reached the agent is a block."""
        rule = self._specials.get("literal-secret")
        findings: list[Finding] = []
        if rule is not None and text:
            kinds = self._secret_kinds(text)
            if kinds:
                findings.append(
                    Finding(rule, rule.severity, None, f"secret in tool output ({kinds})")
                )
        decision = self._decide(findings)
        self.decisions.append(decision)
        return decision

    def check_workspace(self, root: Path) -> list[GuardDecision]:
        """After the rollout: protected files under ``root`` whose hash changed are blocks."""
        rule = self._specials.get("integrity")
        out: list[GuardDecision] = []
        for change in changed_files(self.profile, root):
            out.append(
                GuardDecision(
                    decision="block",
                    rule=rule.id if rule else "integrity.protected-changed",
                    reason=f"protected file {change.path} was {change.change} during the rollout",
                    bundle=self.bundle_version,
                )
            )
        self.decisions.extend(out)
        return out

    # ------------------------------------------------------------------ internals

    def _context(self, created: frozenset[str]) -> MatchContext:
        return MatchContext(
            home=self.state.home,
            protected=self.protected,
            source_ids=self.profile.source_ids,
            answer_stores=(*self.bundle.answer_stores, *self.profile.answer_urls),
            created=created,
        )

    def _findings(self, effects: list[Effect], created: frozenset[str]) -> list[Finding]:
        ctx = self._context(created)
        found: list[Finding] = []
        for effect in effects:
            for compiled in self._rules[effect.kind]:
                strength = match(compiled, effect, ctx)
                if strength is None:
                    continue
                rule = compiled.rule
                severity = rule.severity if strength == "exact" else "flag"
                note = "" if strength == "exact" else f"({strength} match) {rule.rationale}"
                found.append(Finding(rule, severity, effect, note))
        return found

    def _special_findings(
        self, effects: list[Effect], arguments: Mapping[str, Any]
    ) -> list[Finding]:
        found: list[Finding] = []
        raw = _raw_text(arguments)
        decoded = [e.detail for e in effects if e.kind == "exec" and e.target == "<code>"]
        if decoded:
            raw = "\n".join([raw, *decoded])
        secret = self._specials.get("literal-secret")
        if secret is not None:
            kinds = self._secret_kinds(raw)
            if kinds:
                found.append(Finding(secret, secret.severity, None, f"literal secret ({kinds})"))
        opaque = self._specials.get("opaque-protected")
        if opaque is not None and any(e.kind == "unparsed" for e in effects):
            low = raw.lower()
            hit = next((t for t in (*self._tokens, *opaque.tokens) if t.lower() in low), None)
            if hit is not None:
                note = f"a command that could not be fully understood mentions {hit!r}"
                found.append(Finding(opaque, opaque.severity, None, note))
        return found

    def _secret_kinds(self, text: str) -> str:
        before = dict(self._scrub.counts)
        self._scrub.text(DOC_URL_CREDENTIALS.sub("", text))
        new = [k for k, n in self._scrub.counts.items() if n > before.get(k, 0)]
        return ", ".join(sorted(new))

    def _decide(self, findings: list[Finding]) -> GuardDecision:
        if not findings:
            return GuardDecision(decision="allow", reason=ALLOW_REASON, bundle=self.bundle_version)
        blocks = [f for f in findings if f.severity == "block"]
        first = (blocks or findings)[0]
        others = tuple(dict.fromkeys(f.rule.id for f in findings if f.rule.id != first.rule.id))
        return GuardDecision(
            decision="block" if blocks else "flag",
            rule=first.rule.id,
            reason=Scrubber().text(first.reason())[:500],
            bundle=self.bundle_version,
            also=others,
        )

    def _remember(self, effects: list[Effect], creating: set[str]) -> None:
        state = self.state
        state.created |= creating
        for effect in effects:
            if effect.kind in ("read", "write") and effect.target not in state.created:
                state.seen.add(effect.target)
            whole = effect.kind == "write" and effect.whole and not effect.via
            if whole and effect.detail and len(effect.detail) <= MAX_REMEMBERED_FILE:
                state.files[effect.target] = effect.detail
            if effect.kind == "delete":
                state.created.discard(effect.target)
            if effect.kind == "git-history" and effect.target == "create-ref":
                state.refs.add(effect.detail.removeprefix("create-ref "))

    def _protected_tokens(self) -> tuple[str, ...]:
        tokens: list[str] = list(self.profile.source_ids)
        for path in self.protected:
            tokens.append(path.rsplit("/", 1)[-1])
            rel = path.removeprefix(self.profile.workspace.rstrip("/") + "/")
            tokens.append(rel)
        return tuple(t for t in dict.fromkeys(tokens) if len(t) >= 4)


def _raw_text(arguments: Mapping[str, Any]) -> str:
    """Every string inside the arguments, one per line (keys included)."""
    out: list[str] = []
    stack: list[Any] = [arguments]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping):
            for key, value in item.items():
                out.append(str(key))
                stack.append(value)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return "\n".join(out)
