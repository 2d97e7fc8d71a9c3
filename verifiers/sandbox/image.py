"""The docker sandbox image: a minimal Debian rootfs built locally, no registry needed.

``debootstrap`` fetches Debian packages from the same mirror apt uses, a few pinned Python wheels
Debian does not package (polars, for the data-task oracles) are fetched by pip from the package
index and unpacked into the tree, the tree is trimmed and ``docker import``-ed with a label
carrying the recipe hash. The tag names the recipe version;
an image whose label does not match the current recipe is stale and gets rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajforge.errors import SandboxError

log = logging.getLogger(__name__)

RECIPE_VERSION = "1"
REPOSITORY = "trajforge-sandbox"
IMAGE_TAG = f"{REPOSITORY}:{RECIPE_VERSION}"
RECIPE_LABEL = "trajforge.sandbox.recipe"
SUITE = "bookworm"
PACKAGES = ("python3", "python3-pytest", "nodejs", "procps")
IMAGE_PYTHON = "3.11"
"""The image's Python (Debian bookworm's)."""
WHEELS = ("polars==2.1.0", "polars-runtime-32==2.1.0")
"""Pinned wheels unpacked into the image's ``/usr/local`` site-packages."""
DEFAULT_MIRROR = "http://deb.debian.org/debian"
TRIM = (
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
    "var/cache/apt",
    "var/lib/apt/lists",
    "var/log",
)
SANDBOX_UID = 65534
CHANGES = (
    "ENV PATH=/usr/local/bin:/usr/bin:/bin",
    "ENV LANG=C.UTF-8",
    "ENV TZ=UTC",
    "WORKDIR /workspace",
    f"USER {SANDBOX_UID}:{SANDBOX_UID}",
    'CMD ["sleep", "infinity"]',
)

Progress = Callable[[str], None]


@dataclass(frozen=True)
class BuildResult:
    """What ``build_image`` did."""

    tag: str
    image_id: str
    recipe: str
    built: bool
    """False when an up-to-date image already existed and nothing was done."""
    seconds: float
    size_mb: float
    mirror: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "tag": self.tag,
            "image_id": self.image_id,
            "recipe": self.recipe,
            "built": self.built,
            "seconds": round(self.seconds, 1),
            "size_mb": round(self.size_mb, 1),
            "mirror": self.mirror,
        }


def recipe_hash() -> str:
    """sha256 of everything that decides the image's content."""
    recipe = {
        "version": RECIPE_VERSION,
        "suite": SUITE,
        "packages": PACKAGES,
        "wheels": WHEELS,
        "python": IMAGE_PYTHON,
        "trim": TRIM,
        "changes": CHANGES,
        "variant": "minbase",
    }
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()


def image_state(client: Any) -> str | None:
    """None when the current image exists, else why it cannot be used."""
    import docker.errors

    try:
        image = client.images.get(IMAGE_TAG)
    except docker.errors.ImageNotFound:
        return f"image {IMAGE_TAG} is missing; run `trajforge sandbox build-image`"
    label = (image.labels or {}).get(RECIPE_LABEL)
    if label != recipe_hash():
        return f"image {IMAGE_TAG} is from another recipe; run `trajforge sandbox build-image`"
    return None


def apt_mirror(sources: list[Path] | None = None) -> str:
    """The Debian mirror apt is configured with (one-line or deb822 sources), else the default."""
    if sources is None:
        apt = Path("/etc/apt")
        sources = [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*"))]
    for path in sources:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for uri in _debian_uris(text):
            return uri
    return DEFAULT_MIRROR


def _debian_uris(text: str) -> Iterator[str]:
    """Main-archive URIs (not -security, not third-party) in one sources file."""
    stanza_uris: list[str] = []
    for raw in [*text.splitlines(), ""]:
        line = raw.split("#", 1)[0].strip()
        parts = line.split()
        if parts[:1] == ["deb"]:
            uri = next((p for p in parts[1:] if not p.startswith("[")), "")
            if _is_debian_main(uri, parts):
                yield uri
        elif line.lower().startswith("uris:"):
            stanza_uris = line.split(":", 1)[1].split()
        elif line.lower().startswith("suites:"):
            suites = line.split(":", 1)[1].split()
            if SUITE in suites:
                yield from (u for u in stanza_uris if _is_debian_main(u, suites))
        elif not line:
            stanza_uris = []


def _is_debian_main(uri: str, words: list[str]) -> bool:
    return uri.rstrip("/").endswith("/debian") and SUITE in words


def build_image(
    *, force: bool = False, mirror: str | None = None, progress: Progress | None = None
) -> BuildResult:
    """Build (or keep) the sandbox image; idempotent unless ``force``."""
    import time

    import docker
    import docker.errors

    say = progress or (lambda message: log.info("%s", message))
    started = time.monotonic()
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        raise SandboxError(f"docker engine unreachable: {exc}") from None
    mirror = mirror or apt_mirror()
    recipe = recipe_hash()
    if not force and image_state(client) is None:
        say(f"{IMAGE_TAG} is up to date (recipe {recipe[:12]})")
        return _result(client, recipe, False, time.monotonic() - started, mirror)
    _check_prerequisites()
    previous = _image_id(client)
    workdir = Path(tempfile.mkdtemp(prefix="trajforge-image-", dir=_scratch_dir()))
    try:
        rootfs = workdir / "rootfs"
        _debootstrap(rootfs, mirror, workdir / "debootstrap.log", say)
        _install_wheels(rootfs, workdir / "wheels", say)
        _trim(rootfs)
        say(f"importing rootfs as {IMAGE_TAG}")
        _import(client, rootfs, recipe)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result = _result(client, recipe, True, time.monotonic() - started, mirror)
    if previous and previous != result.image_id:
        _remove_quietly(client, previous)
    say(f"built {IMAGE_TAG} ({result.size_mb:.0f} MB) in {result.seconds:.0f}s")
    return result


def _result(client: Any, recipe: str, built: bool, seconds: float, mirror: str) -> BuildResult:
    image = client.images.get(IMAGE_TAG)
    size = float(image.attrs.get("Size", 0)) / 1e6
    return BuildResult(IMAGE_TAG, image.id, recipe, built, seconds, size, mirror)


def _image_id(client: Any) -> str | None:
    import docker.errors

    try:
        return str(client.images.get(IMAGE_TAG).id)
    except docker.errors.ImageNotFound:
        return None


def _remove_quietly(client: Any, image_id: str) -> None:
    """Drop the image a rebuild replaced; kept (and logged) while containers still use it."""
    import docker.errors

    try:
        client.images.remove(image_id)
    except docker.errors.APIError as exc:
        log.info("keeping the previous sandbox image %s: %s", image_id[:19], exc)


def _scratch_dir() -> str | None:
    """Somewhere with room for a ~400 MB tree (``/tmp`` may be a small tmpfs)."""
    for candidate in (os.environ.get("TRAJFORGE_BUILD_DIR"), "/var/tmp"):
        if candidate and Path(candidate).is_dir():
            return candidate
    return None


def _check_prerequisites() -> None:
    if shutil.which("debootstrap") is None:
        raise SandboxError("debootstrap is not installed; run `apt-get install -y debootstrap`")
    if os.geteuid() != 0:
        raise SandboxError("building the sandbox image runs debootstrap, which needs root")
    if shutil.which("tar") is None:
        raise SandboxError("tar is not installed")


def _debootstrap(rootfs: Path, mirror: str, log_path: Path, say: Progress) -> None:
    say(f"debootstrap {SUITE} ({', '.join(PACKAGES)}) from {mirror}; log: {log_path}")
    argv = [
        "debootstrap",
        "--variant=minbase",
        f"--include={','.join(PACKAGES)}",
        SUITE,
        str(rootfs),
        mirror,
    ]
    with log_path.open("wb") as sink:
        done = subprocess.run(argv, stdout=sink, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        tail = log_path.read_text(errors="replace").splitlines()[-15:]
        raise SandboxError(
            f"debootstrap failed (exit {done.returncode}) from {mirror}:\n" + "\n".join(tail)
        )


def _install_wheels(rootfs: Path, folder: Path, say: Progress) -> None:
    """Fetch ``WHEELS`` for the image's Python and unpack them into its site-packages."""
    import platform
    import sys
    import zipfile

    say(f"pip download {' '.join(WHEELS)} (CPython {IMAGE_PYTHON})")
    wheel_platform = f"manylinux_2_17_{platform.machine()}"
    argv = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--only-binary=:all:", "--python-version", IMAGE_PYTHON,
            "--platform", wheel_platform, "-d", str(folder), *WHEELS]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-5:]
        raise SandboxError(f"pip download of {', '.join(WHEELS)} failed:\n" + "\n".join(tail))
    site = rootfs / "usr" / "local" / "lib" / f"python{IMAGE_PYTHON}" / "dist-packages"
    site.mkdir(parents=True, exist_ok=True)
    for wheel in sorted(folder.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)


def _trim(rootfs: Path) -> None:
    for rel in TRIM:
        target = rootfs / rel
        if target.is_dir():
            shutil.rmtree(target)
            target.mkdir(mode=0o755)
    (rootfs / "workspace").mkdir(mode=0o755, exist_ok=True)


def _import(client: Any, rootfs: Path, recipe: str) -> None:
    import docker.errors

    changes = [*CHANGES, f"LABEL {RECIPE_LABEL}={recipe}", f"LABEL trajforge.sandbox.suite={SUITE}"]
    tar = subprocess.Popen(
        ["tar", "-C", str(rootfs), "--numeric-owner", "-c", "."],
        stdout=subprocess.PIPE,
    )
    assert tar.stdout is not None
    chunks = iter(lambda: tar.stdout.read(1 << 20) if tar.stdout else b"", b"")
    try:
        client.api.import_image(
            src=chunks,
            repository=REPOSITORY,
            tag=RECIPE_VERSION,
            changes=changes,
            stream_src=True,
        )
    except docker.errors.DockerException as exc:
        raise SandboxError(f"docker import failed: {exc}") from None
    finally:
        tar.stdout.close()
        code = tar.wait()
    if code != 0:
        raise SandboxError(f"tar of the rootfs failed (exit {code})")
