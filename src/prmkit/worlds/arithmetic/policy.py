"""The simulated policy: natural step-by-step solutions with errors at set rates, from any prefix.

It reads a prefix with the gold checker's belief tracker, so it carries earlier errors forward as a
model would: after ``7 + 4 = 12`` it goes on from 12. At every remaining operation it draws ONE event
(a correct step, or an error of :class:`~prmkit.worlds.arithmetic.config.PolicyConfig`); per trace it may instead
be *lucky* (errors that cancel or never reach the answer, and no other error).

The hot path avoids pydantic validation (``model_construct``), uses precompiled templates and plain
tuples, and one ``random.Random`` per call seeded from BLAKE2-derived integers (never ``hash()``).
``Trace.metadata["injected"]`` lists ``[step_index, kind]`` of the errors it meant to make (kinds as the
checker names them, and "neutral"), ``metadata["decisions"]`` how many events it drew and
``metadata["lucky"]`` the lucky mode ("compensate", "misquote" or None); with
``PolicyConfig.systematic > 0`` (and only then, so default traces are unchanged) ``metadata["systematic"]``
is the step index of the problem's :class:`SystematicError` if the trace made it, else None, and
``metadata["misconceptions"]`` lists ``[step_index, name]`` of the misconceptions it followed (only when
it followed one); with ``PolicyConfig.rationalise > 0`` (and only then) ``metadata["rationalised"]`` is the
index of the step it bent to land on the answer it knew, else None. They are for tests only; the checker
never reads them.

A *rationalising* trace (``PolicyConfig.rationalise``) knows the right answer from the problem's graph, a
channel outside the text: when its errors leave it off the right running value at the last operation, it
writes that operation on the right value instead of its own (or, with no operation left, states the right
answer), and lands on the right answer. Its answer then does not depend on its steps (what the
faithfulness interventions of ``prmkit eval faithfulness`` measure).

Two kinds of errors repeat. A *misconception* (:mod:`prmkit.worlds.arithmetic.misconceptions`) is a wrong belief the
policy holds in every problem, triggered by what the step's context shows (``7 * 8``: it writes 54 with
the belief's strength). A *systematic error* is a property of one problem: drawn from a BLAKE2 seed of
the problem id alone (not the sampling seed or ``seed_offset``), so every sample of the problem, in any
call, shares it; each sample reaching its operation repeats it with chance ``systematic_rate``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

from prmkit.core.model import Continuation, Problem, Step
from prmkit.core.seeds import derive_seed
from prmkit.worlds.arithmetic import templates as T
from prmkit.worlds.arithmetic.checker import Belief, Chain, Number, check_step, compute
from prmkit.worlds.arithmetic.config import WORLD_VERSION, PolicyConfig
from prmkit.worlds.arithmetic.generator import PROBLEM_SEED_TAG, apply_op
from prmkit.worlds.arithmetic.misconceptions import Misconception, Written, triggered
from prmkit.worlds.sampling import Sample, SampleTraces, SimulatedPolicy

_OPS = ("+", "-", "*", "/")


@dataclass(frozen=True)
class Rollout:
    """One complete continuation of the world policy and what it did on the way."""

    texts: list[str]
    """The steps' texts."""
    final: str | None
    """The final answer."""
    finished: bool
    injected: list[list[Any]]
    """[step index, error kind] of every error injected."""
    decisions: int
    """How many steps the policy chose freely (not forced by a lucky path)."""
    lucky: str | None
    """The lucky mode (``compensate``, ``misquote``) when the path was steered to a right answer by a
    wrong step, else None."""
    sys_at: int
    """Step index of the systematic error, -1 for none."""
    believed: list[list[Any]]
    """[step index, misconception name] of every belief followed."""
    bent: int = -1
    """Step index of the rationalised step (the one bent to land on the known answer), -1 for none."""


_SYSTEMATIC_KINDS = ("arithmetic", "wrong_quantity", "wrong_operation")


class SystematicError(NamedTuple):
    """A problem's systematic error: at operation ``op``, ``a operation operand = result + offset``.

    ``a`` is the sample's running value (the true one after a right prefix, where the step is always the
    same text but for template choice). Kinds: "arithmetic" (the right operation and operand, result off
    by ``offset``), "wrong_quantity" (a fixed wrong operand), "wrong_operation" (a fixed other operation).
    """

    op: int
    """Index of the operation of the problem's chain where the error is made."""
    kind: str
    """The error kind, as the checker names it."""
    operation: str
    """The operation written (another one for "wrong_operation")."""
    operand: Number
    """The second operand written (another one for "wrong_quantity")."""
    offset: int = 0
    """Added to the exact result (nonzero for "arithmetic" only)."""
    exact: bool = True
    """False for an invented operand of a division: the inexact result is truncated."""


def _fmt(x: Number) -> tuple[str, Number, bool]:
    """How the policy writes a value: (text, value it now believes, forced slip?)."""
    if type(x) is int:
        return str(x), x, False
    if isinstance(x, int) or x.denominator == 1:
        return str(int(x)), int(x), False
    if Fraction(str(float(x))) == x:
        return str(float(x)), x, False
    return str(int(x)), int(x), True  # an inexact division after an earlier error: the model truncates


class _Problem:
    """A problem compiled once for sampling: its chain, entity slots and chosen templates."""

    def __init__(self, problem: Problem):
        graph = problem.metadata["graph"]
        self.chain = Chain.of(problem)
        variety = int(graph.get("variety", 0))
        self.slots = {
            "name": graph["name"],
            "P": graph["pronoun"].capitalize(),
            "p": graph["pronoun"],
            "item": graph["item"],
            "other": graph["other"],
        }
        self.ops = {op: self._bind(T.level(T.STEP_OP[op], variety)) for op in _OPS}
        self.start = self._bind(T.level(T.STEP_START, variety))
        self.now = self._bind(T.level(T.STEP_NOW, variety))
        self.other = self._bind(T.level(T.STEP_OTHER, variety))
        d = graph.get("distractor")
        self.distractor = None if d is None else graph["quantities"][d]
        self.systematic: SystematicError | None = None
        self.sys_op = -1  # the systematic error's operation index when the policy may repeat it, else -1

    def _bind(self, templates: tuple[str, ...]) -> tuple[str, ...]:
        """Fill the entity slots once, leaving only the numbers ``{a} {b} {c} {v}`` per step."""
        out = []
        for t in templates:
            for key, value in self.slots.items():
                t = t.replace("{" + key + "}", value)
            out.append(t)
        return tuple(out)


class _Writer:
    """One rollout's text and beliefs; the methods write steps and move the belief on."""

    def __init__(self, cp: _Problem, st: Belief, rng: random.Random):
        self.cp, self.rng = cp, rng
        self.r, self.k, self.known = st.r, st.k, set(st.known)
        self.texts: list[str] = []
        self.injected: list[list[Any]] = []
        self.believed: list[list[Any]] = []

    def _pick(self, options: tuple[str, ...]) -> str:
        return options[0] if len(options) == 1 else self.rng.choice(options)

    def op_step(self, op: str, b: Number, c: Number | None = None, kind: str | None = None) -> None:
        exact = compute(op, self.r, b) if c is None else c
        text, value, forced = _fmt(exact) if exact is not None else ("0", 0, True)
        if forced and kind is None:
            kind = "arithmetic"
        if kind is not None:
            self.injected.append([len(self.texts), kind])
        r = self.r
        a_text = str(r) if type(r) is int else _fmt(r)[0]
        b_text = str(b) if type(b) is int else _fmt(b)[0]
        self.texts.append(self._pick(self.cp.ops[op]).format(a=a_text, b=b_text, c=text))
        self.r = value
        self.known.add(value)

    def side_step(self, value: Number | None = None) -> None:
        """A true restatement (neutral), or with ``value`` a misquoted start quantity (an error)."""
        cp = self.cp
        if value is not None:
            self.injected.append([len(self.texts), "wrong_quantity"])
            self.texts.append(self._pick(cp.start).format(v=value))
            return
        self.injected.append([len(self.texts), "neutral"])
        choices = 3 if cp.distractor is not None else 2
        which = self.rng.randrange(choices)
        if which == 2:
            self.texts.append(self._pick(cp.other).format(v=cp.distractor))
        elif which == 1:
            self.texts.append(self._pick(cp.now).format(v=_fmt(self.r)[0]))
        else:
            self.texts.append(self._pick(cp.start).format(v=cp.chain.quantities[0]))

    def answer(self, kind: str | None = None, known: int | None = None) -> str:
        """State the running value as the answer, or (rationalising) the ``known`` right answer."""
        if kind is not None:
            self.injected.append([len(self.texts), kind])
        text = _fmt(self.r if known is None else known)[0]
        self.texts.append(T.ANSWER.format(v=text))
        return text

    # --- errors ---------------------------------------------------------------------------------

    def slip(self, true: Number) -> Number:
        rng = self.rng
        delta = rng.choice((-2, -1, 1, 2, 10) if abs(true) >= 10 else (-2, -1, 1, 2))
        wrong = true + delta
        return true - delta if wrong < 0 else wrong

    def wrong_quantity(self, op: str, q: int) -> tuple[Number, bool]:
        """A wrong second operand: another quantity of the problem or a misread one; (b, exact?)."""
        chain, r = self.cp.chain, self.r
        later = {q_j for op_j, q_j in chain.ops[self.k + 1 :] if op_j == op}

        def ok(v: Number) -> bool:
            return v != q and v not in later and v >= (2 if op in "*/" else 1) and (op != "/" or r % v == 0)

        given = [v for v in dict.fromkeys(chain.quantities) if ok(v)]
        if given and self.rng.random() < 0.5:
            return self.rng.choice(given), True
        misread = [v for v in (q - 2, q - 1, q + 1, q + 2) if ok(v)]
        if op == "/" and not misread:
            misread = [v for v in range(2, int(abs(r)) + 1) if ok(v)][:4]
        if misread:
            return self.rng.choice(misread), True
        unknown = next(v for v in range(q + 1, q + 1000) if v not in self.known and v not in later)
        return unknown, op != "/"

    def wrong_operation(self, op: str, q: int) -> str:
        alts = [o for o in _OPS if o != op and (o != "/" or (q != 0 and self.r % q == 0))]
        return self.rng.choice(alts)

    def bend(self, op: str, q: int, true: int, result: int) -> None:
        """Write the pending operation on the right running value ``true`` in place of the believed one,
        with the right ``result``: the rationalising step (``17 + 4 = 21`` after computing 18)."""
        self.injected.append([len(self.texts), "rationalised"])
        self.texts.append(self._pick(self.cp.ops[op]).format(a=true, b=q, c=result))
        self.r = result
        self.known.add(result)
        self.k += 1

    def believe(self, m: Misconception, written: Written) -> None:
        """Write the step a misconception makes at the pending operation (always exact and positive)."""
        self.believed.append([len(self.texts), m.name])
        op, b, c = written
        self.op_step(op, b, c, m.kind)
        self.k += 1

    def misconceive(self, m: SystematicError) -> bool:
        """Write the problem's systematic step at the pending operation; False (nothing written) where the
        running value makes it inexact, negative or unrecognisable, so the sample draws as usual."""
        c = compute(m.operation, self.r, m.operand)
        if c is None:
            return False
        if not m.exact:
            if m.operand in self.known:  # a truncated result of known operands would read as a slip
                return False
            c = int(c)
        elif _fmt(c)[2] or (m.offset and c + m.offset < 0):
            return False
        self.op_step(m.operation, m.operand, c + m.offset, m.kind)
        self.k += 1
        return True


def _draw_systematic(cp: _Problem, problem_id: str, chance: float) -> SystematicError | None:
    """The systematic error of a problem (None with probability ``1 - chance``), from its id alone.

    The draws come in a fixed order (has-one, operation, kind, then the wrong value, made with the same
    helpers as the independent errors on the true running value), so they do not depend on ``chance``:
    a problem that has one at ``chance`` has the same one at any higher chance.
    """
    rng = random.Random(derive_seed("misconception", PROBLEM_SEED_TAG, problem_id))
    if rng.random() >= chance:
        return None
    chain = cp.chain
    k = rng.randrange(len(chain.ops))
    kind = rng.choice(_SYSTEMATIC_KINDS)
    op, q = chain.ops[k]
    r = chain.quantities[0] if k == 0 else chain.results[k - 1]
    w = _Writer(cp, Belief(r, k, set(chain.quantities) | set(chain.results[:k])), rng)
    if kind == "arithmetic":
        true = apply_op(op, r, q)
        return SystematicError(k, kind, op, q, offset=int(w.slip(true) - true))
    if kind == "wrong_quantity":
        b, exact = w.wrong_quantity(op, q)
        return SystematicError(k, kind, op, b, exact=exact)
    return SystematicError(k, kind, w.wrong_operation(op, q), q)


class WorldPolicy(SimulatedPolicy):
    """The world's simulated policy; implements :class:`prmkit.core.protocols.Policy`."""

    def __init__(self, config: PolicyConfig | None = None, seed_offset: int = 0):
        self.config = config or PolicyConfig()
        self.seed_offset = seed_offset
        self.name = "world"
        rates = self.config.rates()
        acc, self._thresholds = 0.0, []
        for event in PolicyConfig.EVENTS:
            acc += rates[event]
            self._thresholds.append((acc, event))
        self._lucky = self.config.lucky_rate()
        self._systematic = self.config.systematic
        self._sys_rate = self.config.systematic_sample_rate() if self._systematic else 0.0
        self._belief_scale = self.config.misconception_scale()
        self._rationalise = self.config.rationalise
        self._calls = 0
        self._compiled: dict[tuple[str, str], _Problem] = {}

    def compile(self, problem: Problem) -> _Problem:
        key = (problem.id, problem.text)
        cp = self._compiled.get(key)
        if cp is None:
            if len(self._compiled) > 50_000:
                self._compiled.clear()
            cp = self._compiled[key] = _Problem(problem)
            if self._systematic:
                cp.systematic = _draw_systematic(cp, problem.id, self._systematic)
                if cp.systematic is not None and self._sys_rate:
                    cp.sys_op = cp.systematic.op
        return cp

    def systematic_error(self, problem: Problem) -> SystematicError | None:
        """The systematic error this policy's samples of ``problem`` share, if it has one."""
        return self.compile(problem).systematic

    def _event(self, u: float) -> str | None:
        for limit, event in self._thresholds:
            if u < limit:
                return event
        return None

    def rollout(self, cp: _Problem, st: Belief, rng: random.Random) -> Rollout:
        """One complete continuation from ``st``."""
        w = _Writer(cp, st, rng)
        ops = cp.chain.ops
        n_ops = len(ops)
        lucky_at, lucky_mode, decisions, sys_at, bent = -1, None, 0, -1, -1
        sys_op, systematic = cp.sys_op, cp.systematic  # sys_op is -1 when there is none
        scale = self._belief_scale
        if self._lucky and rng.random() < self._lucky and w.k < n_ops:
            lucky_mode = "compensate" if n_ops - w.k >= 2 and rng.random() < 0.5 else "misquote"
            lucky_at = rng.randint(w.k, n_ops - (2 if lucky_mode == "compensate" else 1))
        # no draw at all when off, so ``rationalise: 0`` samples exactly as before the knob
        bend = bool(self._rationalise) and lucky_mode is None and rng.random() < self._rationalise
        while w.k < n_ops:
            k = w.k
            op, q = ops[k]
            if lucky_mode is not None:
                if k == lucky_at and lucky_mode == "misquote":
                    q0 = cp.chain.quantities[0]
                    w.side_step(next(v for v in range(q0 + 1, q0 + 1000) if v not in w.known))
                if k == lucky_at and lucky_mode == "compensate":
                    true = compute(op, w.r, q)
                    w.op_step(op, q, w.slip(true), "arithmetic")
                    w.k += 1
                    op2, q2 = ops[k + 1]
                    w.op_step(op2, q2, compute(op2, true, q2), "arithmetic")
                    w.k += 1
                else:
                    w.op_step(op, q)
                    w.k += 1
                continue
            if bend and k == n_ops - 1 and w.r != cp.chain.before(k):  # off the right value: bend
                bent = len(w.texts)
                w.bend(op, q, cp.chain.before(k), cp.chain.results[k])
                continue
            decisions += 1
            if k == sys_op and rng.random() < self._sys_rate and w.misconceive(systematic):  # type: ignore[arg-type]
                sys_at = len(w.texts) - 1
                continue
            if scale:  # no draw at all when off, so ``misconceptions: 0`` samples as world-1 did
                hit = triggered(op, w.r, q)
                if hit is not None and rng.random() < min(1.0, hit[0].strength * scale):
                    w.believe(*hit)
                    continue
            event = self._event(rng.random())
            if event == "early_answer" and k >= 1:
                final = w.answer("early_answer")
                return Rollout(w.texts, final, True, w.injected, decisions, None, sys_at, w.believed, bent)
            self._apply(w, event, op, q)
        if bend and w.r != cp.chain.results[-1]:  # no operation left to bend (an error at the last one)
            bent = len(w.texts)
            final = w.answer("rationalised", known=cp.chain.results[-1])
        else:
            final = w.answer()
        return Rollout(w.texts, final, True, w.injected, decisions, lucky_mode, sys_at, w.believed, bent)

    def _apply(self, w: _Writer, event: str | None, op: str, q: int) -> None:
        k, ops = w.k, w.cp.chain.ops
        if event == "dropped_step" and k + 1 < len(ops):
            op2, q2 = ops[k + 1]
            exact = compute(op2, w.r, q2)
            if q2 != q and exact is not None and not _fmt(exact)[2]:
                w.op_step(op2, q2, exact, "skipped_step")
                w.k += 2
                return
        if event == "irrelevant_step":
            w.side_step()
        if event == "arithmetic_slip":
            true = compute(op, w.r, q)
            if true is not None and not _fmt(true)[2]:
                w.op_step(op, q, w.slip(true), "arithmetic")
                w.k += 1
                return
        if event == "wrong_quantity":
            b, exact = w.wrong_quantity(op, q)
            c = compute(op, w.r, b)
            w.op_step(op, b, c if exact else int(c), "wrong_quantity")  # type: ignore[arg-type]
            w.k += 1
            return
        if event == "wrong_operation":
            w.op_step(w.wrong_operation(op, q), q, None, "wrong_operation")
            w.k += 1
            return
        w.op_step(op, q)
        w.k += 1

    # --- the world's parts of :class:`~prmkit.worlds.sampling.SimulatedPolicy` ------------------------

    def read(self, problem: Problem, prefix: Sequence[Step]) -> tuple[_Problem, Belief]:
        """The problem compiled, and the checker's belief after ``prefix`` (errors and all)."""
        cp = self.compile(problem)
        st = Belief.start(cp.chain)
        for step in prefix:
            check_step(cp.chain, st, step.text)
        return cp, st

    def prefix_answer(self, start: tuple[_Problem, Belief]) -> str | None:
        answer = start[1].answer
        return None if answer is None else _fmt(answer)[0]

    def rendered(self, prefix: Sequence[Step]) -> list[str]:
        return [s.text for s in prefix]

    def answered(self, answer: str, n: int, seed: int | None) -> list[Continuation]:
        """As every world's, but a call without a seed uses one up here (as it always has, so the calls
        after it draw as they did)."""
        self.next_seed(seed)
        return super().answered(answer, n, seed)

    def continuation(
        self,
        problem: Problem,
        start: tuple[_Problem, Belief],
        rng: random.Random,
        position: int,
        max_steps: int | None,
    ) -> Continuation:
        """A complete rollout, cut (unfinished) after ``max_steps`` steps."""
        r = self.rollout(*start, rng)
        texts, final, finished = r.texts, r.final, r.finished
        if max_steps is not None and len(texts) > max_steps:
            texts, final, finished = texts[:max_steps], None, False
        return Continuation(steps=[Step(text=t) for t in texts], final_answer=final, finished=finished)

    def draw(self, problem: Problem, start: tuple[_Problem, Belief], rng: random.Random) -> Sample:
        """One complete trace from ``start``, with what it did in its metadata (see the module)."""
        r = self.rollout(*start, rng)
        metadata: dict[str, Any] = {"injected": r.injected, "decisions": r.decisions, "lucky": r.lucky}
        if r.believed:
            metadata["misconceptions"] = r.believed
        if self.config.systematic > 0:
            metadata["systematic"] = r.sys_at if r.sys_at >= 0 else None
        if self.config.rationalise > 0:
            metadata["rationalised"] = r.bent if r.bent >= 0 else None
        return Sample([Step(text=t) for t in r.texts], r.final, metadata)


sample_traces = SampleTraces(WorldPolicy, f"world-policy:{WORLD_VERSION}")
"""``sample_traces(problems, per_problem, seed=0, policy=None, progress=None)``: ``per_problem`` complete
traces of each problem from ``policy`` (a default :class:`WorldPolicy` when None); a trace's draws depend
only on (seed, problem id, its index). Metadata as the module says."""
