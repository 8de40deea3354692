"""``prmkit annotate ...`` end to end through the real command line (serve runs in the HTTP tests)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from prmkit.annotate import auth, work
from prmkit.annotate.store import Store
from prmkit.cli import app
from prmkit.core.dataset import write_traces
from prmkit.formats.inputs import read_traces

runner = CliRunner()


def test_cli_assign_rate_export_agreement_labelstudio(tmp_path, traces) -> None:
    data = tmp_path / "traces.jsonl"
    write_traces(data, traces)
    db = f"sqlite:///{tmp_path / 'labels.db'}"
    res = runner.invoke(
        app,
        ["annotate", "add-user", "boss", "--db", db, "--role", "lead", "--password"],
        env={"PRMKIT_ANNOTATE_PASSWORD": "pw"},
    )
    assert res.exit_code == 0 and len(res.stdout.strip()) > 30  # the login token
    res = runner.invoke(
        app,
        [
            "annotate",
            "assign",
            str(data),
            "--db",
            db,
            "--annotators",
            "ann,bea",
            "--create-users",
            "--gold-world",
            "4",
            "--screening",
            "1",
            "--gold-rate",
            "0.25",
            "--overlap",
            "1.0",
        ],
    )
    assert res.exit_code == 0, res.output
    tokens = dict(line.split("\t") for line in res.stdout.strip().splitlines())
    assert set(tokens) == {"ann", "bea"}
    store = Store(db)
    for name in ("ann", "bea"):
        user = auth.user_for_token(store, tokens[name])
        queue = work.queue(store, user)
        assert len(queue) == 6 + 2 + 1  # 6 data, 2 gold (a quarter), 1 screening first
        for a in queue:
            for step in range(a["n_steps"]):
                work.rate(store, user, a["id"], step, 1)
            work.finish(store, user, a["id"], "solution")
    store.close()

    out = tmp_path / "labels.jsonl"
    res = runner.invoke(app, ["annotate", "export", str(out), "--db", db, "--no-include-gold"])
    assert res.exit_code == 0, res.output
    assert [t.ratings("human:bea") for t in read_traces(out)] == [[1, 1, 1]] * 6
    res = runner.invoke(
        app, ["annotate", "export", str(tmp_path / "p.jsonl"), "--db", db, "--format", "prm800k"]
    )
    assert res.exit_code == 0 and len((tmp_path / "p.jsonl").read_text().splitlines()) == 18
    report = tmp_path / "agreement.json"
    res = runner.invoke(app, ["annotate", "agreement", "--db", db, "--out", str(report)])
    assert res.exit_code == 0 and "Fleiss kappa" in res.output
    assert json.loads(report.read_text())["agreement"]["items_double_labelled"] == 9
    tasks = tmp_path / "tasks.json"
    res = runner.invoke(app, ["annotate", "export-labelstudio", str(tasks), "--db", db])
    assert res.exit_code == 0 and len(json.loads(tasks.read_text())) == 6 + 5  # data + gold + screening
    res = runner.invoke(app, ["annotate", "import-labelstudio", str(tasks), "--db", db])
    assert res.exit_code == 0 and "imported 0 annotation(s)" in res.output
    res = runner.invoke(app, ["annotate", "assign", "--db", db, "--annotators", "zed"])
    assert res.exit_code == 2 and "existing account" in res.output


def test_cli_passwords_never_on_the_command_line(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'labels.db'}"
    # asked for (hidden, twice) when $PRMKIT_ANNOTATE_PASSWORD is not set
    res = runner.invoke(
        app, ["annotate", "add-user", "kim", "--db", db, "--password"], input="s3cret\ns3cret\n"
    )
    assert res.exit_code == 0, res.output
    assert "s3cret" not in res.output  # not echoed
    store = Store(db)
    try:
        assert auth.login_password(store, "kim", "s3cret") == auth.User("kim", "annotator")
    finally:
        store.close()
    # the old flag with a value (visible in `ps`) is gone: a usage error, nothing created
    res = runner.invoke(app, ["annotate", "add-user", "lee", "--db", db, "--password", "visible"])
    assert res.exit_code == 2 and "unexpected extra argument" in res.output


def test_cli_user_errors_are_one_line_without_traceback(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'labels.db'}"
    bad = tmp_path / "ls.json"
    bad.write_text('[{"data": {"trace_id": "t0"},\n "annotations": [}]')
    cases = [
        (["annotate", "import-labelstudio", str(bad), "--db", db], f"{bad}:2: (json): expected valid JSON"),
        (
            ["annotate", "import-labelstudio", str(tmp_path), "--db", db],
            "expected a readable UTF-8 JSON file",
        ),
        (
            ["annotate", "export", str(tmp_path), "--db", db],
            f"{tmp_path}: (output): expected a file to write",
        ),
        (["annotate", "export-labelstudio", str(tmp_path), "--db", db], "expected a file to write"),
        (["annotate", "agreement", "--db", db, "--out", str(tmp_path)], "expected a file to write"),
        (
            ["annotate", "export", str(tmp_path / "x.jsonl"), "--db", "mysql://u@h/labels"],
            "found a mysql:// URL",
        ),
        (["annotate", "add-user", "x", "--db", "postgresql://u@h/labels"], "postgresql+psycopg://"),
        (["annotate", "assign", "--annotators", "a", "--db", str(tmp_path)], "cannot open the database"),
        (["annotate", "serve", "--db", db, "--max-body-bytes", "10"], "--max-body-bytes: Input should be"),
    ]
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 5000 + "]" * 5000)
    cases.append((["annotate", "import-labelstudio", str(deep), "--db", db], f"{deep}: (json): expected"))
    typed = tmp_path / "typed.json"
    typed.write_text(
        json.dumps([{"data": {"trace_id": "t0", "steps": ["a"]}, "annotations": [{"lead_time": "5"}]}])
    )
    cases.append((["annotate", "import-labelstudio", str(typed), "--db", db], "[0].annotations.0.lead_time"))
    for args, message in cases:
        res = runner.invoke(app, args)
        assert res.exit_code in (1, 2) and isinstance(res.exception, SystemExit), (args, res.output)
        assert "Traceback" not in res.output and message in res.output, (args, res.output)
        assert res.output.startswith("error: "), res.output
