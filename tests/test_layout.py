"""The folder is the import path: ``trajforge.verifiers.validate.run`` is the file
``trajforge/verifiers/validate/run.py``, for readers and for tools that follow imports (mypy,
editors, grep by path). The stage folders of the design card stay at the top level;
``trajforge/<stage>`` is a symlink to each, and pyproject maps no folder elsewhere."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STAGES = ("reconstruct", "verifiers", "oracles", "guard", "splits", "train")


def _setuptools() -> dict[str, object]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_stage_folder_is_linked_under_the_package() -> None:
    for stage in STAGES:
        link = REPO / "trajforge" / stage
        assert link.is_symlink(), f"{link} is not a symlink to ../{stage}"
        assert link.resolve() == (REPO / stage).resolve(), link


def test_pyproject_maps_no_folder_and_lists_folders_that_exist() -> None:
    config = _setuptools()
    assert "package-dir" not in config, "a package-dir mapping hides modules from their path"
    packages = config["packages"]
    assert isinstance(packages, list) and "trajforge.verifiers.validate" in packages
    for package in packages:
        init = REPO.joinpath(*package.split(".")) / "__init__.py"
        assert init.is_file(), f"pyproject lists {package} but {init} does not exist"


def test_the_installed_package_is_the_folder() -> None:
    for name in ("trajforge.verifiers.validate.run", "trajforge.reconstruct.pipeline"):
        module = importlib.import_module(name)
        expected = REPO.joinpath(*name.split(".")).with_suffix(".py")
        assert Path(str(module.__file__)).resolve() == expected.resolve(), module.__file__
