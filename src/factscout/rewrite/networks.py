"""The networks of the learned rewrite policies and their settings.

* the decision transformer: Hugging Face's ``DecisionTransformerModel`` (Chen et al. 2021) over
  (return-to-go, state, action) triples, adapted to the discrete action space: actions go in
  one-hot (128 dims), the action head gives 128 logits and invalid actions are masked to
  ``-inf`` (:func:`dt_logits`). Defaults: 6 layers, 8 heads, 768 dimensions, as in the paper.
* the one-action classifier: an MLP (or linear layer) from the state to 128 logits.

Either can fine-tune the MiniLM state encoder with it (``finetune_encoder``; off by default
because it is slow on a CPU). torch and transformers are imported only when a net is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from factscout.errors import InputError, UnknownName
from factscout.nn import require_torch
from factscout.rewrite.actions import N_ACTIONS
from factscout.rewrite.base import DEFAULT_MAX_STEPS, REWARD_MODES, RewardMode, check_positive
from factscout.rewrite.state import STATE_ENCODERS


@dataclass(frozen=True, slots=True)
class DtConfig:
    """Decision transformer settings; the defaults are the paper's (6 layers, 8 heads, 768 dims)."""

    hidden_size: int = 768
    n_layer: int = 6
    n_head: int = 8
    dropout: float = 0.1
    max_steps: int = DEFAULT_MAX_STEPS
    reward: RewardMode = "dense"
    target_return: float = 1.0
    encoder: str = "minilm"
    finetune_encoder: bool = False

    def __post_init__(self) -> None:
        check_positive("DtConfig", hidden_size=self.hidden_size, n_layer=self.n_layer, n_head=self.n_head)
        check_positive("DtConfig", max_steps=self.max_steps)
        if self.hidden_size % self.n_head:
            raise InputError(f"hidden_size {self.hidden_size} is not divisible by n_head {self.n_head}")
        if self.reward not in REWARD_MODES:
            raise UnknownName("reward mode", str(self.reward), REWARD_MODES)
        if not 0.0 <= self.dropout < 1.0:
            raise InputError(f"dropout must be in [0, 1), got {self.dropout!r}")
        STATE_ENCODERS[self.encoder]
        if self.finetune_encoder and self.encoder != "minilm":
            raise InputError(f"only the minilm encoder can be fine-tuned, not {self.encoder!r}")


@dataclass(frozen=True, slots=True)
class ClassifierConfig:
    """One-action classifier settings: a hidden layer of ``hidden`` units (0: linear)."""

    hidden: int = 256
    dropout: float = 0.1
    encoder: str = "minilm"
    finetune_encoder: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.hidden, int) or self.hidden < 0:
            raise InputError(f"hidden must be a non-negative integer, got {self.hidden!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise InputError(f"dropout must be in [0, 1), got {self.dropout!r}")
        STATE_ENCODERS[self.encoder]
        if self.finetune_encoder and self.encoder != "minilm":
            raise InputError(f"only the minilm encoder can be fine-tuned, not {self.encoder!r}")


def trainable_encoder() -> Any:
    """The MiniLM sentence-transformers module itself, for fine-tuning."""
    torch = require_torch("learned rewrite policies")
    from factscout.text.encoder import Encoder

    class TrainableEncoder(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.st = Encoder("minilm", max_seq_length=128).model

        def forward(self, texts: list[str]) -> Any:
            prepare = getattr(self.st, "preprocess", None) or self.st.tokenize  # tokenize: sentence-transformers < 5.2
            features = prepare(texts)
            emb = self.st(features)["sentence_embedding"]
            return torch.nn.functional.normalize(emb, dim=-1)

    return TrainableEncoder()


def decision_transformer(
    state_dim: int, hidden: int, layers: int, heads: int, dropout: float, *, episode_steps: int, context: int
) -> Any:
    """Hugging Face's ``DecisionTransformerModel`` for the discrete edit actions (fed one-hot,
    no tanh on the action head): ``context`` (return-to-go, state, action) steps, timesteps up
    to ``episode_steps``."""
    from transformers import DecisionTransformerConfig, DecisionTransformerModel

    return DecisionTransformerModel(
        DecisionTransformerConfig(
            state_dim=state_dim,
            act_dim=N_ACTIONS,
            hidden_size=hidden,
            n_layer=layers,
            n_head=heads,
            n_inner=4 * hidden,
            max_ep_len=episode_steps,
            n_positions=3 * context,
            action_tanh=False,
            resid_pdrop=dropout,
            embd_pdrop=dropout,
            attn_pdrop=dropout,
            activation_function="gelu_new",
            bos_token_id=None,
            eos_token_id=None,
        )
    )


def build_net(config: DtConfig | ClassifierConfig) -> Any:
    """The torch module of a learned policy: ``head`` (the DT or the classifier) and, when the
    encoder is fine-tuned, ``encoder``."""
    torch = require_torch("learned rewrite policies")
    nn = torch.nn
    dim = STATE_ENCODERS[config.encoder].dimension

    class PolicyNet(nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            if isinstance(config, DtConfig):
                self.head = decision_transformer(
                    dim, config.hidden_size, config.n_layer, config.n_head, config.dropout,
                    episode_steps=config.max_steps, context=config.max_steps,
                )  # fmt: skip
            else:
                layers: list[Any] = []
                width = dim
                if config.hidden:
                    layers += [nn.Linear(dim, config.hidden), nn.ReLU(), nn.Dropout(config.dropout)]
                    width = config.hidden
                self.head = nn.Sequential(*layers, nn.Linear(width, N_ACTIONS))
            self.encoder = trainable_encoder() if config.finetune_encoder else None

    return PolicyNet()


def masked_logits(logits: Any, mask: Any) -> Any:
    """Logits with invalid actions (``mask`` False) set to ``-inf``."""
    return logits.masked_fill(~mask, float("-inf"))


def one_hot_actions(actions: Any, valid: Any) -> Any:
    """(B, T) action ids -> (B, T, 128) one-hot, all zeros where ``valid`` is False."""
    torch = require_torch("learned rewrite policies")
    out = torch.nn.functional.one_hot(actions.clamp(min=0), N_ACTIONS).float()
    return out * valid.unsqueeze(-1).float()


def dt_logits(net: Any, states: Any, actions: Any, action_known: Any, rtg: Any, attention: Any, masks: Any) -> Any:
    """Masked action logits (B, T, 128) of the decision transformer: the action at step t is
    predicted from the state token of step t (actions fed one-hot; ``action_known`` False for
    padding and for the step being predicted)."""
    torch = require_torch("learned rewrite policies")
    batch, steps = states.shape[:2]
    timesteps = torch.arange(steps, dtype=torch.long).unsqueeze(0).expand(batch, steps)
    out = net.head(
        states=states,
        actions=one_hot_actions(actions, action_known),
        returns_to_go=rtg.unsqueeze(-1),
        timesteps=timesteps,
        attention_mask=attention.long(),
        return_dict=True,
    )
    return masked_logits(out.action_preds, masks)
