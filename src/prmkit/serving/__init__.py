"""Serving over HTTP: OpenAI-compatible policy and judge endpoints (and the reward server).

- ``policy_server.py``  ``prmkit serve-policy``: any prmkit policy behind ``/v1/completions`` and a
  judge behind ``/v1/chat/completions`` (critic format), plus ``/v1/models`` and ``/health``; lets users
  test an endpoint pipeline (vLLM / SGLang shaped) against the embedded world with no GPU.
"""
