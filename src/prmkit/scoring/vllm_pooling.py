"""The ``vllm:`` scorer form: a PRM run by vLLM's pooling runner, read exactly as its convention reads it.

vLLM knows nothing of a PRM's prompt layout or of how its classes become a step score, so both stay here,
on the client: the convention (``--convention qwen``, else the one the model's config declares, as
locally) renders each trace with the checkpoint's tokenizer
and chat template, as local scoring does (:meth:`~prmkit.scoring.conventions.Convention.encode_many`);
the token ids go to vLLM (so nothing is tokenized twice, differently); vLLM answers the raw per-token
outputs (``task: "token_classify"``, ``use_activation: false``) and the convention turns the rows at its
read positions into scores with its own read-out (Qwen: softmax over the two classes, class 1;
Math-Shepherd: softmax over the ``+``/``-`` logits, ``+``).

- ``vllm:http(s)://HOST:PORT``  a server (``vllm serve MODEL --runner pooling``, or ``prmkit serve``, which
  answers the same ``/pooling``): requests of at most :data:`CHUNK_PROMPTS` prompts and ``batch_tokens``
  tokens, :data:`IN_FLIGHT` at a time, through :class:`~prmkit.policies.http.OpenAIClient` (retries,
  timeouts, a bound on an answer's size; its key from ``$OPENAI_API_KEY``). The model's name and where its
  tokenizer lives are asked of the server (``/v1/models``: ``id``, ``root``, ``max_model_len``; prmkit's
  ``/health``) unless given (``model``, ``tokenizer``).
- ``vllm:PATH``  vLLM's offline engine on this machine (``LLM(model=PATH, runner="pooling")``,
  ``llm.encode(..., pooling_task="token_classify")``); vLLM is imported only here, and its absence is one line.

Rows come back either at the step tags only (STEP pooling, ``step_tag_id``) or at every token (no
``step_tag_id``); :func:`pick_rows` tells which by their count and keeps the rows at the convention's read
positions, so a convention whose read positions are not one tag (RLHFlow's) works against a server that
returns every token. Conventions that read more than one row per step (``likelihood``, ``implicit``,
``critic``) are refused. A trace past the limit (the checkpoint's declared length, and the server's
``max_model_len`` where it says) follows ``overlong`` before anything is sent (docs/models.md#scorer-forms).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Trace
from prmkit.core.render import step_inputs
from prmkit.modeling.template import Encoded
from prmkit.scoring.scorer import LengthCounts, Overlong, fit

POOLING_TASK = "token_classify"
"""vLLM's pooling task of a PRM: per-token class outputs (``docs/models/pooling_models``)."""
CHUNK_PROMPTS = 64
"""Most prompts in one ``/pooling`` request."""
CHUNK_TOKENS = 32768
"""Most prompt tokens in one ``/pooling`` request (``batch_tokens``); a longer prompt goes alone."""
IN_FLIGHT = 4
"""``/pooling`` requests in flight at once."""
INSTALL = (
    "vllm:PATH runs vLLM's offline engine, and vLLM is not installed here: `pip install vllm==0.33.0` in this "
    "environment (a CUDA GPU is needed; docs/serving.md#scoring-through-vllm), or serve the model with "
    "`vllm serve PATH --runner pooling` and score through vllm:http://HOST:PORT"
)


class VllmScoringError(OSError):
    """vLLM refused, failed or answered something that is not a pooling answer (one line, exit 2)."""


def _refuse(spec: str, field: str, expected: str, found: str, fix: str = "") -> InputError:
    return InputError([Issue(spec, None, field, expected, found, "scorer", fix)], skippable=False)


def reads_rows(cls: type) -> bool:
    """Whether a convention reads one row of the model's outputs per step (what pooling returns): the
    default read-out at the read positions, or the ``+``/``-`` one of the causal families."""
    from prmkit.scoring.conventions import Convention
    from prmkit.scoring.families import _PlusMinus

    return cls.read is Convention.read or cls.read is _PlusMinus.read  # type: ignore[attr-defined]


def client_convention(spec: str, name: str | None, source: str, trust_remote_code: bool = False) -> Any:
    """The convention ``name`` (default: the one ``source``'s config declares, as locally) on the
    tokenizer and config of ``source`` (a folder or Hub id), without the weights: what renders the
    prompts and reads the rows on this side."""
    from transformers import AutoConfig

    from prmkit.modeling.backbone import load_tokenizer
    from prmkit.modeling.checkpoint import check_checkpoint, loading
    from prmkit.scoring.conventions import CONVENTIONS, detect

    check_checkpoint(source)
    with loading(source):
        config = AutoConfig.from_pretrained(source, trust_remote_code=trust_remote_code)
        tokenizer = load_tokenizer(source, trust_remote_code)
    if name is None:
        try:
            name = detect(source, config)
        except InputError:
            raise _refuse(spec, "convention", f"the PRM convention of the served model ({source} declares "
                          "none that says how its steps are read)", "none", "pass --convention NAME (qwen, "
                          "math-shepherd, prmkit, trl, ...: docs/models.md#conventions-one-scorer-for-every-prm-family)"
                          ) from None  # fmt: skip
    cls = CONVENTIONS.get(name)
    if not reads_rows(cls):
        raise _refuse(spec, "convention", "one that reads one row per step (qwen, math-shepherd, prmkit, "
                      "trl, rlhflow, skywork)", name, "score it locally or through prmkit serve "
                      "(http://): it reads more than pooling returns")  # fmt: skip
    return cls(tokenizer, config)


def probe_tag(convention: Any) -> int | None:
    """The one token id every read position of a probe trace holds (vLLM's ``step_tag_id``), or None
    where the read positions are not a tag (RLHFlow's, Skywork's)."""
    enc = convention.encode_many([("1 + 1", ["1 + 1 = 2.", "The answer is 2."])])[0]
    ids = {enc.input_ids[p] for p in enc.tag_positions}
    if len(ids) != 1:
        return None
    tag = ids.pop()
    return tag if [k for k, t in enumerate(enc.input_ids) if t == tag] == enc.tag_positions else None


def pick_rows(rows: list[list[float]], enc: Encoded, where: str) -> list[list[float]]:
    """The rows at ``enc``'s read positions, from the rows at every step tag (STEP pooling) or at every
    token (no ``step_tag_id``): told apart by their count."""
    ids, positions = enc.input_ids, enc.tag_positions
    tags = {ids[p] for p in positions}
    if len(tags) == 1:
        at = [k for k, t in enumerate(ids) if t == next(iter(tags))]
        if len(rows) == len(at):
            index = {p: i for i, p in enumerate(at)}
            return [rows[index[p]] for p in positions]
    if len(rows) == len(ids):
        return [rows[p] for p in positions]
    raise VllmScoringError(
        f"{where}: {len(rows)} rows for a prompt of {len(ids)} tokens and {len(positions)} steps: the "
        "server pools at another step tag than this convention's; serve it with --pooler-config "
        f'\'{{"pooling_type": "STEP", "step_tag_id": {sorted(tags)[0] if tags else "ID"}}}\', or '
        "without step_tag_id (a row per token)"
    )


def step_scores(convention: Any, rows: list[list[float]]) -> list[float]:
    """The convention's read-out of raw rows (logits, one per step), as it reads them locally."""
    import torch

    if not rows:
        return []
    data = torch.tensor(rows, dtype=torch.float32)
    good = getattr(convention, "good_id", None)
    if good is None:
        return convention.scores(data).tolist()
    if data.shape[1] != 2:  # every vocabulary column came back: keep the + / - ones
        data = data[:, [good, convention.bad_id]]
    return data.softmax(-1)[:, 0].tolist()


class VllmScorer:
    """A StepScorer over a pooling backend (:class:`ServerPool` or :class:`EnginePool`): the traces
    rendered and fitted here, the rows pooled there, read here (see the module docstring)."""

    def __init__(self, backend: Any, convention: Any, name: str, limit: tuple[int, str],
                 overlong: Overlong = "error"):  # fmt: skip
        self.backend, self.convention, self.name = backend, convention, name
        self.limit, self.whose = limit
        self.overlong: Overlong = overlong
        self.length_counts = LengthCounts(policy=overlong, limit=self.limit)

    @property
    def threshold(self) -> float | None:
        spec = getattr(self.convention, "spec", None)
        return None if spec is None else spec.threshold

    def encode(self, traces: Sequence[Trace]) -> list[Encoded | None]:
        items = [(t.problem.text, step_inputs(t.steps)) for t in traces]
        out: list[Encoded | None] = []
        for t, enc in zip(traces, self.convention.encode_many(items), strict=True):
            if len(enc.tag_positions) != len(t.steps):
                raise ValueError(
                    f"trace {t.id}: {len(t.steps)} steps but {len(enc.tag_positions)} read positions "
                    "(a step text contains the step tag, or the template lost a step)"
                )
            out.append(fit(t, enc, self.limit, self.overlong, self.length_counts, self.whose))
        return out

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        """One score per step; under ``overlong`` skip / truncate a row is empty / cut, as locally."""
        encoded = self.encode(traces)
        live = [i for i, e in enumerate(encoded) if e is not None]
        pooled = self.backend.pool([encoded[i].input_ids for i in live]) if live else []  # type: ignore[union-attr]
        out: list[list[float]] = [[] for _ in traces]
        for i, rows in zip(live, pooled, strict=True):
            picked = pick_rows(rows, encoded[i], f"{self.name}: trace {traces[i].id}")  # type: ignore[arg-type]
            out[i] = step_scores(self.convention, picked)
        return out


def _chunks(prompts: Sequence[list[int]], tokens: int) -> list[list[int]]:
    """Indices of ``prompts`` cut into requests of at most :data:`CHUNK_PROMPTS` and ``tokens``."""
    out: list[list[int]] = []
    size = 0
    for i, p in enumerate(prompts):
        if out and len(out[-1]) < CHUNK_PROMPTS and size + len(p) <= tokens:
            out[-1].append(i)
            size += len(p)
        else:
            out.append([i])
            size = len(p)
    return out


def _rows(doc: dict[str, Any], n: int, where: str) -> list[list[list[float]]]:
    """The rows of a vLLM ``PoolingResponse`` for ``n`` prompts, in prompt order; anything else is refused."""
    data = doc.get("data")
    items = data if isinstance(data, list) and len(data) == n else None
    if items is None or not all(isinstance(d, dict) and isinstance(d.get("data"), list) for d in items):
        found = f"JSON with keys {sorted(doc)[:6]}" if items is None else "items without row lists"
        raise VllmScoringError(
            f"{where} answered {found}, not vLLM's PoolingResponse ({{'data': [{{'index', 'data': rows}}]}} "
            f"for {n} prompts): is it a vLLM server with a pooling model (vllm serve MODEL --runner pooling)?"
        )
    out: list[list[list[float]]] = [[] for _ in range(n)]
    for k, item in enumerate(items):
        rows = item["data"]
        if rows and not all(isinstance(r, list) for r in rows):
            raise VllmScoringError(
                f"{where}: item {k} holds one vector, not one row per token: the server pools whole "
                "sequences (classify/embed); serve the PRM for token_classify (--runner pooling)"
            )
        out[item.get("index", k) if isinstance(item.get("index"), int) else k] = rows
    return out


class ServerPool:
    """``POST /pooling`` of a vLLM server (or ``prmkit serve``): raw rows per prompt, in order."""

    def __init__(self, client: Any, model: str | None, tokens: int):
        self.client, self.model, self.tokens = client, model, tokens
        self.threads = ThreadPoolExecutor(max_workers=IN_FLIGHT, thread_name_prefix="vllm-pooling")
        """Kept for the scorer's life: the client keeps one connection per thread."""

    def _one(self, prompts: list[list[int]]) -> list[list[list[float]]]:
        from prmkit.policies.http import EndpointError

        body: dict[str, Any] = {"input": prompts, "task": POOLING_TASK, "use_activation": False}
        if self.model is not None:
            body["model"] = self.model
        try:
            doc = self.client.post("/pooling", body)
        except EndpointError as err:
            raise VllmScoringError(str(err)) from None
        return _rows(doc, len(prompts), f"{self.client.base_url}/pooling")

    def pool(self, prompts: Sequence[list[int]]) -> list[list[list[float]]]:
        chunks = _chunks(prompts, self.tokens)
        parts = list(self.threads.map(lambda c: self._one([prompts[i] for i in c]), chunks))
        return [rows for part in parts for rows in part]


def served_model(client: Any, model: str | None, spec: str) -> tuple[str | None, str, int | None]:
    """(model name to send, tokenizer source, the server's ``max_model_len``), asked of ``/v1/models``
    (vLLM) or ``/health`` (prmkit) for what ``model`` does not give."""
    from prmkit.policies.http import EndpointError

    try:
        entries = [e for e in client.get("/v1/models")["data"] if isinstance(e, dict) and "id" in e]
    except (EndpointError, KeyError, TypeError):
        entries = []
    chosen = [e for e in entries if model in (None, e["id"])]
    if len(chosen) == 1:
        e = chosen[0]
        limit = e.get("max_model_len")
        return e["id"], str(e.get("root") or e["id"]), limit if isinstance(limit, int) else None
    if len(chosen) > 1:
        raise _refuse(spec, "model", "the served model to score with", "several: " + ", ".join(e["id"] for e in chosen),
                      "pass model=NAME (load_scorer(..., model=...))")  # fmt: skip
    if model is not None:
        return model, model, None
    try:
        name = client.get("/health")["model"]
    except (EndpointError, KeyError, TypeError):
        name = None
    if not isinstance(name, str):
        raise _refuse(spec, "model", "a server that names its model (/v1/models or /health)", "none",
                      "check the URL, or pass model=NAME and tokenizer=PATH")  # fmt: skip
    return name, name, None


def load_vllm(
    spec: str,
    convention: str | None = None,
    *,
    model: str | None = None,
    tokenizer: str | None = None,
    batch_tokens: int | None = None,
    overlong: Overlong = "error",
    timeout: float = 180.0,
    retries: int = 3,
    trust_remote_code: bool | None = None,
    dtype: str | None = None,
) -> VllmScorer:
    """The ``vllm:`` scorer form (``vllm:http://HOST:PORT`` or ``vllm:PATH``), read by ``convention``
    (default: the one the model's config declares).

    ``model``: the served model's name (default: the server's only one); ``tokenizer``: where its
    tokenizer and config are (default: the server's ``root``, else the model's name); ``batch_tokens``:
    prompt tokens per request (default :data:`CHUNK_TOKENS`); ``dtype``: the offline engine's only."""
    target = spec.split(":", 1)[1] if ":" in spec else ""
    if not target:
        raise _refuse(spec, "(scorer)", "vllm:http://HOST:PORT or vllm:PATH", "nothing after vllm:")
    remote = bool(trust_remote_code)
    if target.startswith(("http://", "https://")):
        from prmkit.policies.http import OpenAIClient

        if dtype is not None:
            raise _refuse(spec, "dtype", "no --dtype (the server chose its own)", dtype, "leave out --dtype")
        client = OpenAIClient(target, concurrency=IN_FLIGHT, retries=retries, timeout=timeout)
        name, source, server_limit = served_model(client, model, spec)
        source = tokenizer or source
        conv = client_convention(spec, convention, source, remote)
        backend: Any = ServerPool(client, name, batch_tokens or CHUNK_TOKENS)
    else:
        source, server_limit = tokenizer or target, None
        conv = client_convention(spec, convention, source, remote)
        backend = EnginePool.start(target, conv, dtype, remote)
    limit = (conv.max_length, f"{conv.length_source} of {source}")
    if server_limit is not None and server_limit < limit[0]:
        limit = (server_limit, f"the max_model_len of the server's {name}")
    return VllmScorer(backend, conv, spec, limit, overlong)


class EnginePool:
    """vLLM's offline engine on this machine: ``LLM(model, runner="pooling")`` with STEP pooling at the
    convention's tag (and its ``+``/``-`` columns for a causal family), ``llm.encode`` of token ids."""

    def __init__(self, llm: Any, params: Any):
        self.llm, self.params = llm, params

    @classmethod
    def start(cls, path: str, convention: Any, dtype: str | None, trust_remote_code: bool) -> EnginePool:
        try:
            import vllm
            from vllm.config import PoolerConfig
        except ImportError:
            raise VllmScoringError(INSTALL) from None
        pooler: dict[str, Any] = {}
        tag = probe_tag(convention)
        if tag is not None:  # else every token's row, read at the convention's positions
            fields = getattr(PoolerConfig, "__dataclass_fields__", {})
            pooler = {"tok_pooling_type" if "tok_pooling_type" in fields else "pooling_type": "STEP",
                      "step_tag_id": tag}  # fmt: skip
            if getattr(convention, "good_id", None) is not None:
                pooler["returned_token_ids"] = [convention.good_id, convention.bad_id]
        llm = vllm.LLM(
            model=path,
            runner="pooling",
            pooler_config=PoolerConfig(**pooler) if pooler else None,
            dtype=dtype or "auto",
            trust_remote_code=trust_remote_code,
        )
        return cls(llm, vllm.PoolingParams(use_activation=False))

    def pool(self, prompts: Sequence[list[int]]) -> list[list[list[float]]]:
        outputs = self.llm.encode(
            [{"prompt_token_ids": list(p)} for p in prompts],
            pooling_params=self.params,
            pooling_task=POOLING_TASK,
            use_tqdm=False,
        )
        return [o.outputs.data.float().cpu().tolist() for o in outputs]
