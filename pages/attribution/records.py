"""The attribution page's records (Context): made once here, not on every rerun as in
page.py (README, "Adding a page")."""

from __future__ import annotations

from dataclasses import dataclass

from components.i18n import N_, _
from components.input_key import InputKey
from core import ModelBundle
from core.attribution import Method, Target, TargetPlan

MEAN = "mean"   # the attribution of the mean over all tokens, not of one
# A method's label is also what a link carries for it (?att_methods=rollout, or the label in
# Chinese): keep these words as they are, or old links lose the method.
METHOD_TITLES = {
    Method.RAW: N_("raw attention"),
    Method.ROLLOUT: N_("rollout"),
    Method.FLOW: N_("flow"),
    Method.NORM: N_("norm-weighted"),
    Method.GRADIENTS: N_("integrated gradients"),
}


def method_label(method: Method) -> str:
    """The method's name in the reader's language."""
    return _(METHOD_TITLES[method])


@dataclass(frozen=True)
class Context:
    key: InputKey
    bundle: ModelBundle
    target: Target
    plan: TargetPlan
    token: str            # MEAN or a position, as a string (the link's value)
    methods: tuple[Method, ...]

    @property
    def token_index(self) -> int | None:
        return None if self.token == MEAN else int(self.token)

    @property
    def layers(self) -> int:
        return self.bundle.config.num_hidden_layers

    @property
    def segments(self) -> list[int]:
        """Which sentence each token is of: its part for the pair's cosine, else its type id."""
        if len(self.plan.parts) == 2:
            return [p for p, part in enumerate(self.plan.parts) for _t in part.input_ids]
        return list(self.plan.parts[0].token_type_ids)

    @property
    def special(self) -> list[bool]:
        return [bool(s) for part in self.plan.parts for s in part.special_tokens_mask]

    def title(self, method: Method) -> str:
        return method_label(method)
