"""Secret scrubbing: every kind is redacted, near-misses and ordinary code are left alone.

Fake secrets are built at test time from a seeded generator, so no secret-shaped literal sits
in the repository.
"""

from __future__ import annotations

import glob
import random
import string
import sysconfig

import pytest

from trajforge.scrub import Scrubber, scrub_text, shannon_entropy

RNG = random.Random(20240601)
ALNUM = string.ascii_letters + string.digits
UPPER_NUM = string.ascii_uppercase + string.digits


def fake(n: int, alphabet: str = ALNUM) -> str:
    """Random characters with a digit and a letter (when the alphabet has them), like a token."""
    need_digit = any(c.isdigit() for c in alphabet)
    need_alpha = any(c.isalpha() for c in alphabet)
    while True:
        s = "".join(RNG.choice(alphabet) for _ in range(n))
        if (not need_digit or any(c.isdigit() for c in s)) and (
            not need_alpha or any(c.isalpha() for c in s)
        ):
            return s


def private_key_block(kind: str = "RSA", newline: str = "\n") -> str:
    body = newline.join(fake(64, ALNUM + "+/") for _ in range(4))
    return (
        f"-----BEGIN {kind} PRIVATE KEY-----{newline}{body}{newline}"
        f"-----END {kind} PRIVATE KEY-----"
    )


# (kind, text before, secret, text after): the secret must vanish, the rest must stay.
CASES = [
    ("hf_token", "HF token is ", "hf_" + fake(34), " ok"),
    ("openai_key", "client = OpenAI(api_key='", "sk-" + fake(48), "')"),
    ("openai_key", "OPENAI_API_KEY=", "sk-proj-" + fake(40) + "-" + fake(60), "\n"),
    ("anthropic_key", "export ANTHROPIC_API_KEY=", "sk-ant-api03-" + fake(90) + "AA", ""),
    ("aws_access_key_id", "id: ", "AKIA" + fake(16, UPPER_NUM), "\n"),
    ("aws_access_key_id", "[", "ASIA" + fake(16, UPPER_NUM), "]"),
    ("aws_secret_key", "aws_secret_access_key = ", fake(40, ALNUM + "/+"), "\n"),
    ("github_token", "git push https://", "ghp_" + fake(36), "@github.com/o/r"),
    ("github_token", "token=", "github_pat_" + fake(22) + "_" + fake(59), ""),
    ("github_token", "GH=", "ghs_" + fake(36), ";"),
    ("gitlab_token", "PRIVATE-TOKEN: ", "glpat-" + fake(20), "\n"),
    ("slack_token", "slack ", "xoxb-" + fake(12, string.digits) + "-" + fake(24), " end"),
    ("google_api_key", "maps?key=", "AIza" + fake(35, ALNUM + "_-"), "&v=3"),
    ("private_key", "key file:\n", private_key_block(), "\nafter the key"),
    ("private_key", '{"pem": "', private_key_block("OPENSSH", "\\n"), '\\n"}'),
    ("bearer_token", "curl -H 'Authorization: Bearer ", fake(40, ALNUM + "._-"), "' x"),
    ("bearer_token", "headers = {'Authorization': 'Basic ", fake(28) + "==", "'}"),
    ("bearer_token", "bearer ", "eyJ" + fake(30) + "." + fake(40) + "." + fake(43), " rest"),
    ("url_credentials", "git clone https://", "deploy:" + fake(20), "@gitlab.com/g/p.git"),
    ("url_credentials", "DATABASE_URL=postgres://", "app:" + fake(12), "@db:5432/app"),
    ("url_credentials", "see https://", "user:pass", "@host/x"),
    ("secret_assignment", "DB_PASSWORD=", fake(24), "\n"),
    ("secret_assignment", "export STRIPE_SECRET=", fake(32), "\n"),
    ("secret_assignment", 'MY_TOKEN="', fake(32), '"'),
    ("secret_assignment", '{"api_key": "', fake(32), '", "n": 1}'),
    ("secret_assignment", "webhook_secret: ", fake(20), "\n"),
    ("secret_assignment", "self.apiKey = '", fake(24), "'"),
    ("secret_assignment", 'api_key: str = "', fake(24), '"'),
    ("secret_assignment", '\\"client_secret\\": \\"', fake(30), '\\"'),
    ("secret_assignment", "--password=", fake(18), " --verbose"),
    ("secret_assignment", "SIGNING_KEY = '", fake(40, "0123456789abcdef"), "'"),
]


@pytest.mark.parametrize(("kind", "before", "secret", "after"), CASES)
def test_every_kind_is_redacted(kind: str, before: str, secret: str, after: str) -> None:
    scrubber = Scrubber()
    out = scrubber.text(before + secret + after)
    assert out == f"{before}[REDACTED:{kind}]{after}"
    assert scrubber.counts == {kind: 1}


NEAR_MISSES = [
    "MAX_TOKENS=4096",
    '"max_tokens": 8192, "input_tokens": 1234',
    'task_key = "build"',
    "SORT_KEY=name",
    "sorted(items, key=lambda kv: kv[1])",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "key = os.environ['OPENAI_API_KEY']",
    "API_KEY=$OPENAI_API_KEY",
    'export HF_TOKEN="${HF_TOKEN}"',
    "token = tokenizer.encode(text)",
    "password = get_password_from_keyring_v2(user)",
    "secret_key = settings.SECRET_KEY_FROM_VAULT",
    "primary_key = 'users_pk_constraint_name_2'",
    "ssh_key_path = '/home/user/.ssh/id_ed25519_2024'",
    "tls_key = 'certs/server-2024-prod.pem'",
    "url = f'https://{user}:{password}@{host}'",
    "postgres://admin:${DB_PASSWORD}@db:5432/app",
    "git@github.com:org/repo.git and https://github.com/org/repo",
    "pip install scikit-learn  # sk-learn-is-not-a-key-at-all",
    "Bearer authentication is described in RFC 6750",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMII\n-----END PUBLIC KEY-----",
    'data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"',
    "monkey = 'ab12cd34ef56gh78ij90'",
    '"AWS::IAM::AccessKey": "62d91b17309e76c8",',
    '"Resource": "arn:aws:secretsmanager:*:*:secret:rds-db-credentials/*",',
    '"Key": "aws:secretsmanager:owningService",',
    '_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n'
    '_SK_END = b"-----END OPENSSH PRIVATE KEY-----"',
    "[REDACTED:hf_token] and api_key=[REDACTED:secret_assignment]",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_left_alone(text: str) -> None:
    scrubber = Scrubber()
    assert scrubber.text(text) == text
    assert not scrubber.counts


def test_known_token_inside_an_assignment_is_named_by_its_own_rule() -> None:
    token = "ghp_" + fake(36)
    scrubber = Scrubber()
    assert scrubber.text(f"GITHUB_TOKEN={token}") == "GITHUB_TOKEN=[REDACTED:github_token]"
    assert scrubber.counts == {"github_token": 1}


def test_several_secrets_in_one_text_and_counts_accumulate() -> None:
    hf, sk = "hf_" + fake(34), "sk-" + fake(48)
    scrubber = Scrubber()
    text = f"a {hf} b {sk} c {hf}\n"
    assert scrubber.text(text) == (
        "a [REDACTED:hf_token] b [REDACTED:openai_key] c [REDACTED:hf_token]\n"
    )
    scrubber.text(sk)
    assert scrubber.counts == {"hf_token": 2, "openai_key": 2}


def test_value_scrubs_nested_structures_and_keys() -> None:
    hf, aws = "hf_" + fake(34), "AKIA" + fake(16, UPPER_NUM)
    scrubber = Scrubber()
    args = ["--token", hf, ("tuple", hf)]
    obj = {
        "args": args,
        hf: {"deep": [{"x": f"id {aws}"}]},
        "n": 3,
        "ok": None,
        "f": 1.5,
    }
    out = scrubber.value(obj)
    red = "[REDACTED:hf_token]"
    assert out == {
        "args": ["--token", red, ("tuple", red)],
        red: {"deep": [{"x": "id [REDACTED:aws_access_key_id]"}]},
        "n": 3,
        "ok": None,
        "f": 1.5,
    }
    assert isinstance(out["args"][2], tuple)
    assert scrubber.counts == {"hf_token": 3, "aws_access_key_id": 1}
    assert args[1] == hf  # the input is not modified


def test_scrub_text_convenience_and_empty_input() -> None:
    assert scrub_text("") == ""
    assert scrub_text("x hf_" + fake(40)) == "x [REDACTED:hf_token]"


def test_non_ascii_text_keeps_positions_right() -> None:
    # "İ" lowercases to two characters; the cased anchor search must still line up
    secret = "sk-" + fake(48)
    text = "İİİ Ünïcödé — " + secret + " — ñ İ"
    assert scrub_text(text) == "İİİ Ünïcödé — [REDACTED:openai_key] — ñ İ"


def test_truncated_private_key_is_still_redacted() -> None:
    block = private_key_block("EC")
    truncated = block[: block.index("-----END")] + "[output truncated]"
    out = scrub_text("cat key.pem\n" + truncated)
    assert out == "cat key.pem\n[REDACTED:private_key]\n[output truncated]"


def test_entropy() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == pytest.approx(2.0)
    assert shannon_entropy(fake(32)) > 3.5


def stdlib_text(limit: int) -> str:
    parts: list[str] = []
    size = 0
    for path in sorted(glob.glob(sysconfig.get_paths()["stdlib"] + "/*.py")):
        with open(path, encoding="utf-8", errors="replace") as f:
            parts.append(f.read())
        size += len(parts[-1])
        if size >= limit:
            break
    return "".join(parts)[:limit]


def test_ordinary_code_is_unchanged() -> None:
    """Speed is measured in benchmarks/scrub.py, not asserted here."""
    text = stdlib_text(1_000_000)
    scrubber = Scrubber()
    out = scrubber.text(text)
    assert out == text
    assert not scrubber.counts
