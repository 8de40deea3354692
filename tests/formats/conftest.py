"""Fixtures of the formats tests: the real sample files, and helpers to write bad variants of them."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def prm800k_labels(real_data: Path) -> Path:
    return real_data / "prm800k" / "labels_openr_samples.jsonl"


@pytest.fixture(scope="session")
def math_splits(real_data: Path) -> Path:
    return real_data / "prm800k" / "math_splits_test_first20.jsonl"


@pytest.fixture(scope="session")
def shepherd(real_data: Path) -> Path:
    return real_data / "math_shepherd" / "math_shepherd_openr_samples.jsonl"


@pytest.fixture(scope="session")
def processbench_files(real_data: Path) -> list[Path]:
    files = sorted((real_data / "processbench").glob("*.json"))
    assert len(files) == 4
    return files
