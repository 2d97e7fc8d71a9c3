"""Shared guard fixtures: the default bundle and a detector on its example profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajforge.guard.engine import RuleDetector, bundle_at
from trajforge.guard.profile import Profile
from trajforge.guard.rules import Bundle


@pytest.fixture(scope="session")
def bundle() -> Bundle:
    return bundle_at()


@pytest.fixture()
def profile(bundle: Bundle) -> Profile:
    return Profile.model_validate(bundle.example_profile)


@pytest.fixture()
def detector(profile: Profile, bundle: Bundle) -> RuleDetector:
    return RuleDetector(profile, bundle)


@pytest.fixture()
def profile_file(tmp_path: Path, profile: Profile) -> Path:
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile.model_dump(mode="json")))
    return path
