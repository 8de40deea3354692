"""Serving over HTTP: the reward server and an OpenAI-compatible policy server.

- ``reward_server.py``  ``prmkit serve MODEL`` (any scorer spec ``prmkit.scoring.load_scorer`` reads):
  ``/score``, ``/get_reward`` (OpenRLHF), ``/pooling`` (vLLM shape), ``/verify``, ``/health``,
  ``/metrics``, ``/docs``; ``create_app``, ``serve``
- ``routes.py``         the reward server's endpoints: one ``APIRouter`` of plain functions
- ``verify.py``         ``POST /verify``, the deployment gate's router: accept, flag at the first doubtful
  step, or resample through a policy endpoint
- ``gate.py``           the gate's rule (threshold, aggregation, action), its policy endpoint, and
  ``prmkit gate measure``: its TPR / TNR on gold-labelled traces, written as the card's monitor
- ``limits.py``         request limits that need no tokenizer (traces, steps, characters, estimated cost),
  checked before a request costs any work
- ``config.py``         ``ServerConfig`` (with the gate's ``GateOptions``) and ``GateMeasureConfig``: the
  commands' options (kept free of fastapi for a fast CLI)
- ``guard.py``          ASGI middleware before FastAPI: body size, API key, strict JSON (NaN, surrogates,
  huge integers, depth -> 422), request metrics by route template
- ``batching.py``       ``DynamicBatcher``: requests arriving together share one forward pass; a queue
  bounded in traces, estimated cost and waiting time answers 503 (``QueueFull``) instead of piling up
- ``schemas.py``        request and response bodies (errors included, for the OpenAPI page)
- ``pooling.py``        vLLM STEP pooling for ``/pooling``: the rows at the step tag, on the ids sent
- ``metrics.py``        ``/metrics`` through ``prometheus_client``
- ``policy_server.py``  ``prmkit serve-policy``: any prmkit policy behind ``/v1/completions`` and a judge
  behind ``/v1/chat/completions`` (critic format), plus ``/v1/models`` and ``/health``, so endpoint
  pipelines (vLLM / SGLang shaped) can be tested against the embedded world with no GPU
- ``views.py``          the server's benchmark as a docs table (``bench/results/serving-*.json``)

The RL adapters (TRL, verl, OpenRLHF) live in :mod:`prmkit.rl`; the HTTP client of this server,
``RemoteScorer``, in :mod:`prmkit.scoring.remote` (``prmkit.scoring.load_scorer`` reads a server URL).
"""
