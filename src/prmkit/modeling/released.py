"""prmkit's own implementations of released PRM architectures that transformers does not ship.

A released checkpoint whose ``config.json`` points at its own modelling code (``auto_map``) is read by a
class here instead, so no code from a checkpoint folder runs and the model does not depend on that code
running under the pinned transformers. Each class is the body transformers has (``Qwen2Model``) plus the
head as the released weights name it, checked against the published index files and vLLM's native
implementation (``vllm/model_executor/models/qwen2_rm.py``); :func:`prmkit.modeling.loading.load_exact`
refuses a checkpoint whose weights do not match it exactly.

- :class:`Qwen2ForProcessRewardModel`: Qwen2.5-Math-PRM-7B / -72B and Qwen2.5-Math-7B-PRM800K; ``score``
  is ``Linear(h, h)``, ReLU, ``Linear(h, 2)`` on every token (``score.0.*``, ``score.2.*``).
- :class:`Qwen2ForPrmModel`: Skywork-o1-Open-PRM (1.5B, 7B); ``v_head.summary`` is ``Linear(h, 1)`` on the
  last hidden state (SkyworkAI/skywork-o1-prm-inference ``model_utils/prm_model.py``, vLLM plugin).
- :class:`Qwen2ForRewardModel`: a value head ``score`` (``Linear(h, h)``, ReLU, ``Linear(h, 1)``) on every
  token; Universal-PRM-7B is read with it (``universal``), its names unverified.
- :class:`ImplicitPair`: an implicit PRM (PRIME, EurusPRM) and its reference policy, two causal LMs.

Both reward heads leave an ``lm_head.*`` the released files may carry unused, as vLLM's loaders do
(``ignore_unexpected_prefixes=["lm_head."]``): the reward never reads the vocabulary. Any other weight that
does not match is refused.
"""

from __future__ import annotations

from typing import Any

from torch import nn
from transformers import Qwen2Model, Qwen2PreTrainedModel
from transformers.modeling_outputs import TokenClassifierOutput

LM_HEAD = [r"^lm_head\."]
"""The language-model head a released reward checkpoint may still carry (the reward does not read it)."""


class Qwen2ForProcessRewardModel(Qwen2PreTrainedModel):
    """Qwen2.5-Math-PRM: the Qwen2 body and a two-layer head giving two class logits at every token
    (class 1 = the step is correct, read at each ``<extra_0>``)."""

    _keys_to_ignore_on_load_unexpected = LM_HEAD

    def __init__(self, config: Any):
        super().__init__(config)
        self.num_labels = 2  # what the released code and vLLM fix, whatever config.num_labels says
        self.model = Qwen2Model(config)
        self.score = nn.Sequential(
            nn.Linear(config.hidden_size, config.hidden_size),
            nn.ReLU(),
            nn.Linear(config.hidden_size, self.num_labels),
        )
        self.post_init()

    def forward(
        self, input_ids: Any = None, attention_mask: Any = None, **kwargs: Any
    ) -> TokenClassifierOutput:
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False, **kwargs)
        return TokenClassifierOutput(logits=self.score(hidden.last_hidden_state))


class Qwen2ForPrmModel(Qwen2PreTrainedModel):
    """Skywork-o1-Open-PRM: the Qwen2 body and a value head, one logit per token (``v_head.summary``); the
    reference reads ``sigmoid`` of it at each step token. Its dropout (0.1) is inactive at inference and
    has no weights, so it is left out."""

    _keys_to_ignore_on_load_unexpected = LM_HEAD

    def __init__(self, config: Any):
        super().__init__(config)
        self.model = Qwen2Model(config)
        self.v_head = nn.Module()
        self.v_head.summary = nn.Linear(config.hidden_size, 1)
        self.post_init()

    def forward(
        self, input_ids: Any = None, attention_mask: Any = None, **kwargs: Any
    ) -> TokenClassifierOutput:
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False, **kwargs)
        return TokenClassifierOutput(logits=self.v_head.summary(hidden.last_hidden_state))


class Qwen2ForRewardModel(Qwen2PreTrainedModel):
    """A Qwen2 body and a two-layer value head, one value per token (``score.0`` h x h, ReLU, ``score.2``
    1 x h, biases): Qwen2.5-Math-RM's layout (vLLM's ``Qwen2ForRewardModel``), read by the ``universal``
    convention at the last token of each step prefix (Universal-PRM-7B; its head names are unverified, see
    :class:`~prmkit.scoring.families.UniversalConvention`)."""

    _keys_to_ignore_on_load_unexpected = LM_HEAD

    def __init__(self, config: Any):
        super().__init__(config)
        self.model = Qwen2Model(config)
        self.score = nn.Sequential(
            nn.Linear(config.hidden_size, config.hidden_size), nn.ReLU(), nn.Linear(config.hidden_size, 1)
        )
        self.post_init()

    def forward(
        self, input_ids: Any = None, attention_mask: Any = None, **kwargs: Any
    ) -> TokenClassifierOutput:
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False, **kwargs)
        return TokenClassifierOutput(logits=self.score(hidden.last_hidden_state))


class ImplicitPair(nn.Module):
    """An implicit PRM and its reference: two causal LMs over the same tokens, and ``beta``. The reward of
    a token is ``beta * (log policy(x_t | x_<t) - log reference(x_t | x_<t))`` (PRIME, Yuan et al. 2024,
    "Free Process Rewards without Process Labels"); ``prmkit.scoring.families.ImplicitConvention`` sums it."""

    def __init__(self, policy: Any, reference: Any, beta: float):
        super().__init__()
        self.policy, self.reference, self.beta = policy, reference, beta

    @property
    def config(self) -> Any:
        return self.policy.config

    @property
    def device(self) -> Any:
        return self.policy.device

    @property
    def hf_device_map(self) -> Any:
        return getattr(self.policy, "hf_device_map", None)

    def get_input_embeddings(self) -> Any:
        return self.policy.get_input_embeddings()
