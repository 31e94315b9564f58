"""Parameter counts of a BertModel: from the config (counting), in the model (listing), as
tables (tables), for the published checkpoints and custom sizes (presets), and the path of one
input through the model with its shapes (architecture)."""

from core.parameters.counting import count_from_config

__all__ = ["count_from_config"]
