"""The card's roles over labels made the way real data is: 1,000 world traces judged by an endpoint judge
(its raw answer in every label, as ``label_judge`` stores it) and a subset rated by two annotators in the
annotation app (time and assignment in every label, as its export writes them): one provenance entry per
source, every role named or "none declared", the monitor read from ``--monitor``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prmkit.annotate import auth, work
from prmkit.annotate.agreement import agreement
from prmkit.annotate.assign import assign_items
from prmkit.annotate.export import export_traces
from prmkit.annotate.store import Store
from prmkit.cards.card import full_card, write_card
from prmkit.cards.process_card import ProcessCard, read_process_card, summarize_sources, write_process_card
from prmkit.cards.render import render_markdown
from prmkit.cards.roles import NONE_DECLARED, DeploymentMonitor, Roles, read_monitor, trace_roles
from prmkit.core.errors import InputError
from prmkit.core.model import PER_LABEL_PARAMS, Trace
from prmkit.evaluation.suite import world_traces
from prmkit.labeling.judge import label_judge
from prmkit.labeling.report import label_report
from prmkit.policies.critic import parse_first_error, verdict_from_first_error
from prmkit.worlds.agent.tools import TOOL_NAMES

JUDGE = "endpoint:Qwen2.5-72B-Instruct"
ROLE_ROWS = (
    "| base model |",
    "| policy (wrote the training traces) |",
    "| ORM |",
    "| PRM |",
    "| automated judge |",
    "| human labels |",
    "| tool scaffold |",
    "| deployment monitor |",
)
ROLE_KEYS = {"traces", "base_model", "policy", "orm", "prm", "judge", "human", "tool_scaffold", "monitor"}


class EndpointCritic:
    """What the endpoint judge does after its HTTP call (``prmkit.policies.endpoint``): read the critic's
    answer with ``parse_first_error`` into ``verdict_from_first_error``, the raw text kept. It names the
    gold first error on two traces of three and says "no error" on the third."""

    name = JUDGE

    def judge(self, problem, steps):
        fe = Trace(id="x", problem=problem, steps=list(steps)).first_error("gold")
        guess = -1 if sum(map(ord, problem.id)) % 3 == 0 else fe
        raw = f"Reviewing {steps[-1].text!r} of {problem.id}; the earliest error: \\boxed{{{guess}}}"
        return verdict_from_first_error(parse_first_error(raw), len(steps), raw)


def annotate(store: Store, traces: list[Trace]) -> None:
    """alice and bob rate every trace in the app, stopping at the first error; alice follows gold, bob
    calls the step before it wrong on every other trace that has one."""
    work.load_items(store, traces)
    assign_items(store, ["alice", "bob"], overlap=1.0, per_item=2, create_users=True)
    for name in ("alice", "bob"):
        user = auth.User(name, "annotator")
        for k, a in enumerate(work.queue(store, user)):
            trace = work.assignment_state(store, user, a["id"])["trace"]
            gold, fe = trace.ratings("gold:world:local"), trace.first_error("gold")
            if name == "bob" and fe > 0 and k % 2:
                fe -= 1
            stop = len(trace.steps) if fe == -1 else fe + 1
            for i in range(stop):
                rating = -1 if i == fe else max(gold[i], 0)
                work.rate(store, user, a["id"], i, rating, time_ms=900 + 37 * i + k)
            work.finish(
                store, user, a["id"], "solution" if fe == -1 else "found_error", total_time_ms=5000 + k
            )


@pytest.fixture(scope="module")
def labelled(tmp_path_factory) -> tuple[list[Trace], Store]:
    """1,000 endpoint-judged world traces; the first 8 also rated by alice and bob in the app."""
    judged, summary = label_judge(world_traces(250, 4, seed=2, split="train"), EndpointCritic())
    assert summary["ok"] == 1000
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('app') / 'labels.db'}")
    annotate(store, judged[:8])
    rated = {t.id: t for t in export_traces(store)}
    return [rated.get(t.id, t) for t in judged], store


def test_one_provenance_entry_per_source(labelled):
    traces, _ = labelled
    raws = {
        lab.provenance.params["raw"]
        for t in traces
        for s in t.steps
        for lab in s.labels
        if lab.provenance.method == "judge"
    }
    assert len(raws) > 600  # hundreds of distinct raw answers, one in every judge label...
    judge, alice, bob = summarize_sources(traces, ["judge", "human:alice", "human:bob"])
    assert len(judge.provenance) == 1  # ...and still one judge entry
    entry = judge.provenance[0]
    assert entry["actor"] == JUDGE and entry["params"] == {} and entry["per_label"] == ["raw"]
    assert entry["labels"] == judge.steps == sum(1 for t in traces for s in t.steps if s.label("judge"))
    for person in (alice, bob):
        assert len(person.provenance) == 1 and person.provenance[0]["labels"] == person.steps > 8
        assert person.provenance[0]["version"] == "prmkit.annotate/1"
        assert person.provenance[0]["per_label"] == sorted(PER_LABEL_PARAMS["human"])
    (human,) = summarize_sources(traces, ["human"])  # both under one selector: one entry per annotator
    assert [(p["actor"], p["labels"]) for p in human.provenance] == [
        ("alice", alice.steps),
        ("bob", bob.steps),
    ]


def test_every_role_is_summarised_from_the_traces(labelled):
    traces, store = labelled
    roles = trace_roles(traces, ["judge", "human"])
    assert roles.traces == 1000
    (policy,) = roles.policy
    assert policy.name.startswith("world-policy:") and policy.traces == 1000
    assert policy.sampling == [{"policy": "world", "seed": 2, "per_problem": 4, "temperature": 1.0}]
    (judge,) = roles.judge
    report = label_report(traces, reference="gold", sources=[f"judge:{JUDGE}"])["sources"][f"judge:{JUDGE}"]
    assert judge.source == f"judge:{JUDGE}" and judge.traces == 1000 and judge.accuracy.reference == "gold"
    assert (
        judge.accuracy.first_error_accuracy == report["first_error"]["accuracy"]
    )  # the label report's number
    assert 0.5 < judge.accuracy.first_error_accuracy < 0.8  # it says "no error" on a third of the traces
    human = roles.human
    assert [a.name for a in human.annotators] == ["alice", "bob"] and human.made_with == ["prmkit.annotate/1"]
    assert all(a.traces == 8 for a in human.annotators)
    assert human.annotators[0].gold_accuracy.first_error_accuracy == 1.0  # alice follows gold
    assert human.annotators[1].gold_accuracy.first_error_accuracy < 1.0
    assert human.agreement == agreement(store).to_dict()  # the app's own numbers, from the exported labels
    assert human.agreement["first_error_pairs"] == 8 and human.agreement["first_error_agreement"] < 1.0
    assert roles.tool_scaffold is None  # arithmetic: no tools


def test_the_card_shows_every_role_in_readme_and_json(labelled, tmp_path):
    traces, _ = labelled
    model, orm = tmp_path / "prm", tmp_path / "orm"
    sources = ["judge", "human"]
    write_process_card(
        model,
        ProcessCard(kind="prm", base_model="Qwen/Qwen2.5-0.5B", model={"aggregation": "min"},
                    labels=summarize_sources(traces, sources), roles=trace_roles(traces, sources)),
    )  # fmt: skip
    write_process_card(orm, ProcessCard(kind="orm"))
    gate = DeploymentMonitor(
        rule="flag a trace whose min step score is below the threshold", aggregation="min", threshold=0.42,
        action="flag", measured_on="world-test", traces=400, positives=250, tpr=0.9, tnr=0.8, g_mean2=0.72,
    )  # fmt: skip
    monitor = tmp_path / "monitor.json"
    monitor.write_text(gate.model_dump_json())
    readme = write_card(model, None, orm=orm, monitor=read_monitor(monitor)).read_text()

    roles = json.loads((model / "process_card.json").read_text())["roles"]
    assert set(roles) == ROLE_KEYS
    assert DeploymentMonitor.model_validate(roles["monitor"]) == gate  # --monitor round-trips
    assert roles["orm"] == {"name": "orm", "link": str(orm), "card": str(orm / "process_card.json")}
    assert roles["base_model"]["link"] == "https://huggingface.co/Qwen/Qwen2.5-0.5B"
    assert read_process_card(model).roles.judge[0].labels == roles["judge"][0]["labels"] > 1000
    section = readme.split("## Roles")[1].split("\n## ")[0]
    rows = {line.split(" | ")[0] + " |": line for line in section.splitlines() if line.startswith("| ")}
    assert all(row in rows for row in ROLE_ROWS)
    assert NONE_DECLARED not in section  # every role is declared here...
    assert "none: plain reasoning steps" in rows["| tool scaffold |"]  # ...the tools as "none" for math
    assert "seed=2, per_problem=4" in rows["| policy (wrote the training traces) |"]
    assert f"`judge:{JUDGE}`" in rows["| automated judge |"] and "against gold on 1,000 traces" in section
    assert "2 annotator(s)" in rows["| human labels |"] and "Fleiss' kappa" in rows["| human labels |"]
    assert "TPR 0.900, TNR 0.800" in rows["| deployment monitor |"] and "world-test" in section
    labels = readme.split("## How the labels were made")[1].split("\n## ")[0]
    assert labels.count(JUDGE) == 1 and "each with its own raw" in labels


def test_a_card_without_roles_says_none_declared_or_unknown(tmp_path):
    readme = render_markdown(full_card(ProcessCard(kind="prm", model={}), None))
    section = readme.split("## Roles")[1].split("\n## ")[0]
    assert all(row in section for row in ROLE_ROWS)
    for row in ("| ORM |", "| deployment monitor |"):
        assert f"{row} {NONE_DECLARED} |" in section
    assert "| base model | `none: trained from scratch` |" in section
    assert "unknown: training did not summarise its traces" in section  # a card from before roles
    empty = render_markdown(full_card(ProcessCard(kind="prm", model={}, roles=trace_roles([], [])), None))
    assert (
        f"| automated judge | {NONE_DECLARED} |" in empty and f"| human labels | {NONE_DECLARED} |" in empty
    )


def test_agent_traces_name_their_tools_and_layout():
    roles = trace_roles(world_traces(3, 2, seed=1, split="train", world="agent"), ["gold"])
    tools = roles.tool_scaffold
    assert [t["function"]["name"] for t in tools.tools] == list(TOOL_NAMES)
    assert sum(tools.calls.values()) > 0 and set(tools.calls) <= set(TOOL_NAMES)
    assert "<tool_call>" in tools.example and "<tool_call>" in tools.layout
    readme = render_markdown(full_card(ProcessCard(kind="prm", model={}, roles=roles), None))
    assert "`lookup` (" in readme and "```text\n" in readme


def test_bad_monitor_files_fail_in_one_line_naming_file_and_field(tmp_path):
    bad = tmp_path / "gate.json"
    bad.write_text(json.dumps({"rule": "flag", "aggregation": "mni", "threshold": "high", "action": "drop"}))
    with pytest.raises(InputError) as err:
        read_monitor(bad)
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{bad}: aggregation:")
    assert f"{bad}: threshold:" in text and f"{bad}: action:" in text and "did you mean 'min'" in text
    bad.write_text('{"rule": "flag",\n "threshold": }')
    with pytest.raises(InputError, match=rf"^{bad}:2: \(file\): expected JSON") as err:
        read_monitor(bad)
    assert "\n" not in str(err.value)
    bad.write_text(
        json.dumps({"rule": "flag", "aggregation": "min", "threshold": 0.5, "action": "flag", "tpr": 1.5})
    )
    with pytest.raises(InputError, match=r"gate.json: tpr: expected input should be less than or equal to 1"):
        read_monitor(bad)


def test_prmkit_card_takes_monitor_and_refuses_a_bad_one_before_measuring(tmp_path):
    from prmkit.cli import app

    runner = CliRunner()
    assert "--monitor" in runner.invoke(app, ["card", "--help"], terminal_width=200).output
    bad = tmp_path / "gate.json"
    bad.write_text(json.dumps({"rule": "flag", "aggregation": "min", "threshold": 0.5}))
    result = runner.invoke(app, ["card", str(tmp_path / "no-model"), "--monitor", str(bad)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and f"{bad}: action: expected field required" in lines[0]


def test_roles_json_round_trips():
    roles = Roles(monitor=DeploymentMonitor(rule="r", aggregation="min", threshold=0.1, action="resample"))
    assert Roles.model_validate_json(roles.model_dump_json()) == roles
