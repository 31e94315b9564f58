"""BERT Embedding Explorer core: all the math, no Streamlit. Usable from a notebook:

    from core import load_model, analyze
    bundle = load_model()                      # the embedded all-MiniLM-L6-v2
    result = analyze(bundle, "This is a test sentence")
    result.input_ids                           # [101, 2023, 2003, 1037, 3231, 6251, 102]
    result.stages["LayerNorm"].shape           # (7, 384)
"""

from core.analysis import EMBEDDING_STAGES, Analysis, analyze, analyze_encoding
from core.errors import (
    ExplorerError,
    InputError,
    ModelLoadError,
    ModelTooLargeError,
    ModelUnavailableError,
    NotBertError,
)
from core.models import ModelBundle, load_config, load_model
from core.settings import DEFAULT_MODEL, KNOWN_MODELS
from core.tokens import Encoding, encode

__all__ = [
    "DEFAULT_MODEL",
    "EMBEDDING_STAGES",
    "KNOWN_MODELS",
    "Analysis",
    "Encoding",
    "ExplorerError",
    "InputError",
    "ModelBundle",
    "ModelLoadError",
    "ModelTooLargeError",
    "ModelUnavailableError",
    "NotBertError",
    "analyze",
    "analyze_encoding",
    "encode",
    "load_config",
    "load_model",
]
