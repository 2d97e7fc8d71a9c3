"""``trajforge sandbox build-image``: build the docker sandbox image locally (no registry).

Imported by :mod:`trajforge.cli.sandbox_cmd`, which lists this module in
``EXTRA_COMMAND_MODULES``; importing it adds the command to ``sandbox_app``.
"""

from __future__ import annotations

import typer

from trajforge.cli.common import err, out, print_json
from trajforge.cli.sandbox_cmd import sandbox_app


@sandbox_app.command("build-image")
def build_image_command(
    force: bool = typer.Option(False, "--force", help="Rebuild even when the image is current."),
    mirror: str | None = typer.Option(
        None, "--mirror", help="Debian mirror URL (default: the one apt is configured with)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Build the docker sandbox image from Debian packages (debootstrap + docker import).

    Idempotent: does nothing when the image for the current recipe exists, unless --force.
    Needs root, debootstrap and a running Docker engine; progress goes to stderr.
    """
    from trajforge.verifiers.sandbox.image import build_image

    result = build_image(
        force=force, mirror=mirror, progress=lambda message: err.print(message, markup=False)
    )
    if as_json:
        print_json(result.as_dict())
        return
    verb = "built" if result.built else "up to date:"
    out.print(
        f"{verb} {result.tag} ({result.image_id[:19]}, {result.size_mb:.0f} MB, "
        f"recipe {result.recipe[:12]})",
        markup=False,
    )
