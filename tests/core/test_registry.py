"""Registries: lazy targets, "Did you mean", a name registered twice refused, plugins from entry points."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from prmkit.core.registry import DuplicateNameError, PluginError, Registry, UnknownNameError


def test_lazy_targets_load_when_used_and_unknown_names_get_suggestions() -> None:
    reg: Registry[object] = Registry("widget")
    reg.register("path", "pathlib:Path")
    reg.register("join", "os.path:join")
    reg.register("sep", "os:path.sep")  # a dotted attribute
    assert reg.get("path") is Path and reg.get("sep") == "/"
    with pytest.raises(
        UnknownNameError, match=r"unknown widget 'paht'\. Did you mean 'path'\? Known: join, path, sep\."
    ):
        reg.get("paht")


def test_an_alias_reads_as_its_new_name_and_derived_entries_follow_their_source() -> None:
    """A renamed backend's old name still loads (not listed); a registry derived from another holds an
    entry per name of the source, its aliases included, and a derived name that clashes is refused."""
    kinds: Registry[object] = Registry("kind")
    kinds.register("new", "pathlib:Path")
    kinds.alias("old", "new")
    assert kinds.get("old") is Path and "old" in kinds and kinds.names() == ["new"]
    assert kinds.canonical("old") == "new" and kinds.canonical("other") == "other"
    with pytest.raises(DuplicateNameError):
        kinds.alias("new", "other")
    tools: Registry[object] = Registry("tool")
    tools.derive(kinds, lambda n: f"{n}-tool", lambda n: ("made for", n))
    assert tools.names() == ["new-tool"] and tools.get("old-tool") == ("made for", "new")
    kinds.register("more", "pathlib:PurePath")
    tools.refresh()
    assert tools.names() == ["more-tool", "new-tool"]
    clash: Registry[object] = Registry("tool")
    clash.register("new-tool", "os:sep")
    clash.derive(kinds, lambda n: f"{n}-tool", lambda n: (n,))
    with pytest.raises(DuplicateNameError, match="registered twice: by prmkit and by the kind 'new'"):
        clash.names()


def test_a_name_registered_twice_is_refused() -> None:
    reg: Registry[object] = Registry("widget")
    reg.register("a", "pathlib:Path")

    with pytest.raises(DuplicateNameError, match="widget 'a' is registered twice"):

        @reg.register("a")
        def other() -> None: ...

    assert reg.get("a") is Path  # the first registration stands


def _install(
    site: Path, dist: str, group: str, entries: dict[str, str], module: str = "", source: str = ""
) -> None:
    """A minimal installed distribution: an optional module and a dist-info holding its entry points."""
    site.mkdir(parents=True, exist_ok=True)
    if module:
        (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"  # the escaped name, as installers write it
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n", encoding="utf-8")
    lines = "".join(f"{k} = {v}\n" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}", encoding="utf-8")
    importlib.invalidate_caches()  # importlib.metadata caches a folder's listing


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    """A folder on sys.path for plugin distributions, removed afterwards."""
    path = tmp_path / "site"
    path.mkdir()
    sys.path.insert(0, str(path))
    importlib.invalidate_caches()
    yield path
    sys.path.remove(str(path))
    importlib.invalidate_caches()
    for name in [m for m in sys.modules if m.startswith("plugin_")]:
        del sys.modules[name]


def test_entry_points_register_lazily_and_clashes_are_refused(site: Path) -> None:
    group = "prmkit.test-widgets"
    _install(site, "plugin-widgets", group, {"double": "plugin_widgets:double"}, "plugin_widgets",
             "def double(x):\n    return 2 * x\n")  # fmt: skip
    reg: Registry[object] = Registry("widget", entry_points=group)
    reg.register("half", "operator:truediv")
    assert "plugin_widgets" not in sys.modules
    assert reg.names() == ["double", "half"]
    assert "plugin_widgets" not in sys.modules  # listed, not imported
    assert reg.get("double")(21) == 42  # type: ignore[operator]

    _install(site, "plugin-clash", group, {"half": "plugin_widgets:double"})
    clash: Registry[object] = Registry("widget", entry_points=group)
    clash.register("half", "operator:truediv")
    with pytest.raises(
        DuplicateNameError,
        match=r"widget 'half' is registered twice: by prmkit and by entry point half = 'plugin_widgets:double' of plugin-clash 1.0",
    ):
        clash.get("half")


def test_a_broken_plugin_is_one_line_naming_its_distribution(site: Path) -> None:
    group = "prmkit.test-broken"
    _install(site, "plugin-broken", group, {"gone": "plugin_missing_module:thing"})
    reg: Registry[object] = Registry("widget", entry_points=group)
    with pytest.raises(
        PluginError, match=r"widget 'gone' .*of plugin-broken 1\.0.*cannot be loaded: No module named"
    ):
        reg.get("gone")


def test_a_convention_plugin_is_found_by_the_conventions_registry(site: Path) -> None:
    """The same mechanism for PRM conventions: group ``prmkit.conventions``, picked up by refresh()."""
    from prmkit.scoring.conventions import CONVENTIONS, TrlConvention

    source = "from prmkit.scoring.conventions import TrlConvention\n\nclass Tab(TrlConvention):\n    name = 'tab'\n"
    _install(site, "plugin-tab", "prmkit.conventions", {"tab": "plugin_tab:Tab"}, "plugin_tab", source)
    try:
        CONVENTIONS.refresh()
        cls = CONVENTIONS.get("tab")
        assert issubclass(cls, TrlConvention) and cls.name == "tab"
    finally:
        sys.path.remove(str(site))
        CONVENTIONS.refresh()
        sys.path.insert(0, str(site))
    assert "tab" not in CONVENTIONS
