"""prmkit shares an environment (issue 35): ranges in pyproject.toml, exact versions in constraints.txt.

The fast tests read the files: every requirement is a range (``>=`` and ``<``, never ``==``) and every
package constraints.txt pins is installed here at exactly that version, so `make` installs what the suite
tests. The resolver tests ask pip (``install --dry-run``, against PyPI) whether prmkit installs beside
the framework versions the docs name; they skip where PyPI is not reachable.

Not vLLM: pip finds no install of prmkit beside vLLM 0.33.0 (the version docs/serving.md's
``/pooling`` follows), which wants ``fastapi<0.137`` and, through mistral_common, ``numpy<2.4`` on
Python 3.12 and older, below the versions prmkit is tested with (0.165, 2.4). prmkit talks to a vLLM
server over HTTP, from its own environment. The resolver test takes about a minute, hence ``slow``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import urllib.request
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def requirements() -> list[Requirement]:
    """pyproject.toml's dependencies and optional dependencies."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = project["dependencies"] + [
        r for extra in project["optional-dependencies"].values() for r in extra
    ]
    return [Requirement(line) for line in lines]


def constraints() -> dict[str, str]:
    """constraints.txt as {canonical name: pinned version}."""
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not NAME==VERSION"
            pins[canonicalize_name(name)] = version
    return pins


def test_every_requirement_is_a_range_pinned_in_constraints() -> None:
    pins = constraints()
    for req in requirements():
        ops = {s.operator for s in req.specifier}
        assert ops == {">=", "<"}, f"pyproject.toml: {req}: want a range '>=LOW,<NEXT_MAJOR', not {ops}"
        name = canonicalize_name(req.name)
        assert name in pins, f"constraints.txt: {req.name} is missing (add '{req.name}==<tested version>')"
        assert req.specifier.contains(pins[name]), f"constraints.txt: {name}=={pins[name]} outside {req}"


def test_constraints_are_the_installed_versions() -> None:
    """``==2.13.0`` matches the installed ``2.13.0+cpu``: a local label is a build of the same release."""
    wrong = []
    for name, version in constraints().items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = "not installed"
        if installed == "not installed" or not SpecifierSet(f"=={version}").contains(Version(installed)):
            wrong.append(f"{name}=={version} (installed: {installed})")
    assert not wrong, (
        "constraints.txt differs from this environment (`make install` reinstalls): " + ", ".join(wrong)
    )


# ---- the resolver, against PyPI ----

INDEX = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/").rstrip("/") + "/"


@pytest.fixture(scope="module")
def pypi() -> None:
    try:
        urllib.request.urlopen(INDEX + "pip/", timeout=10).close()
    except OSError as err:
        pytest.skip(f"the package index {INDEX} is not reachable ({err}): pip's resolver needs it")


def resolving(*reqs: str, tmp_path: Path) -> subprocess.Popen:
    """``pip install --dry-run`` of prmkit (this checkout) with ``reqs``, from nothing, started: its
    ``--report`` comes on stdout. torch is held at constraints.txt's version, which lies on disk, so pip
    reads no multi-GB CUDA wheel."""
    torch = tmp_path / "torch.txt"
    torch.write_text(f"torch=={constraints()['torch']}\n")
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
    cmd += ["--report", "-", "-c", str(torch), *reqs]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)


def resolved(proc: subprocess.Popen, what: str) -> dict[str, str]:
    """What the started resolver would install: {canonical name: version}."""
    out, err = proc.communicate(timeout=300)
    errors = "\n".join(line for line in err.splitlines() if "is ignored" not in line)
    assert proc.returncode == 0, f"pip found no install of {what}:\n{errors[-3000:]}"
    report = json.loads(out)
    return {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"] for i in report["install"]}


@pytest.mark.slow
def test_prmkit_installs_beside_verl_and_beside_trl(pypi, tmp_path) -> None:
    """verl 0.9.1 with requirements-verl.txt's pins (``make verl-env``: transformers 5.10, not 5.23),
    and prmkit's ``rl`` extra with TRL 1.16.0 (the version prmkit.rl.trl subclasses). The two resolvers
    run side by side: they wait on the index more than they compute (~1 minute together).

    ``pip install prmkit verl==0.9.1`` with no other pin resolved too (63 s, 2026-11-26), left out of
    the suite for its time: ``make verl-env`` installs prmkit beside verl for real in every CI run."""
    (tmp_path / "verl").mkdir()
    (tmp_path / "trl").mkdir()
    verl = resolving(str(ROOT), "-r", str(ROOT / "requirements-verl.txt"), tmp_path=tmp_path / "verl")
    trl = resolving(f"{ROOT}[rl]", "trl==1.16.0", tmp_path=tmp_path / "trl")
    got = resolved(verl, "prmkit beside requirements-verl.txt")
    assert got["verl"] == "0.9.1" and got["prmkit"] == "0.1.0"
    assert Version(got["transformers"]) < Version("5.11")
    got = resolved(trl, "prmkit[rl] beside trl==1.16.0")
    assert got["trl"] == "1.16.0" and got["prmkit"] == "0.1.0"
