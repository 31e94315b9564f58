"""BERT Embedding Explorer core: all the math, no Streamlit. Usable from a notebook:

    from core import load_model, analyze, encoder_steps, mask_tokens
    bundle = load_model()                      # the embedded all-MiniLM-L6-v2
    result = analyze(bundle, "This is a test sentence")
    result.input_ids                           # [101, 2023, 2003, 1037, 3231, 6251, 102]
    result.stages["LayerNorm"].shape           # (7, 384)
    encoder_steps(bundle, "This is a test sentence", layer=1).steps["attention_probs"].shape
                                               # (12, 7, 7)
    mask_tokens(bundle, "This is a test sentence", seed=0).kinds
"""

from typing import TYPE_CHECKING

from core.lazy import lazy_names

if TYPE_CHECKING:
    from core.analysis import EMBEDDING_STAGES, Analysis, analyze, analyze_encoding
    from core.attribution import (
        IntegratedGradients,
        attention_flow,
        attention_rollout,
        integrated_gradients,
        norm_weighted_attention,
    )
    from core.attribution.blank_out import blank_out  # its module: mypy took the submodule
    from core.compare import layer_similarity
    from core.encoder import (
        CLARK_2019,
        EncoderSteps,
        HeadAtlas,
        corpus_head_atlas,
        encoder_steps,
        encoder_steps_of,
        head_atlas,
        head_slice,
        pooler_steps,
        residual_shares,
        token_trajectory,
        without_specials,
    )
    from core.errors import (
        ExplorerError,
        InputError,
        ModelLoadError,
        ModelTooLargeError,
        ModelUnavailableError,
        NotBertError,
    )
    from core.finetune import FineTuneRun, FineTuneTask, fine_tune
    from core.models import ModelBundle, load_config, load_model
    from core.pretraining import (
        Masking,
        NextSentence,
        NoPretrainingHeadError,
        Prediction,
        fill_mask,
        finetuning_patterns,
        has_mlm_head,
        has_nsp_head,
        mask_tokens,
        next_sentence,
    )
    from core.pretraining.mask_lens import mask_lens  # (as blank_out)
    from core.probes import LayerProbe, layer_probe
    from core.settings import DEFAULT_MODEL, KNOWN_MODELS
    from core.similarity.pairs import PairContributions, compare_pairs, pair_contributions
    from core.tokens import Encoding, encode

# Imported from its module when first asked for (core/lazy.py): importing this package
# imports none of them. A type checker reads the imports above instead.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_names(globals(), {
        "core.analysis": ("EMBEDDING_STAGES", "Analysis", "analyze", "analyze_encoding"),
        "core.attribution": (
            "IntegratedGradients", "attention_flow", "attention_rollout", "blank_out",
            "integrated_gradients", "norm_weighted_attention",
        ),
        "core.compare": ("layer_similarity",),
        "core.encoder": (
            "CLARK_2019", "EncoderSteps", "HeadAtlas", "corpus_head_atlas", "encoder_steps",
            "encoder_steps_of", "head_atlas", "head_slice", "pooler_steps", "residual_shares",
            "token_trajectory", "without_specials",
        ),
        "core.errors": (
            "ExplorerError", "InputError", "ModelLoadError", "ModelTooLargeError",
            "ModelUnavailableError", "NotBertError",
        ),
        "core.finetune": ("FineTuneRun", "FineTuneTask", "fine_tune"),
        "core.models": ("ModelBundle", "load_config", "load_model"),
        "core.probes": ("LayerProbe", "layer_probe"),
        "core.pretraining": (
            "Masking", "NextSentence", "NoPretrainingHeadError", "Prediction", "fill_mask",
            "finetuning_patterns", "has_mlm_head", "has_nsp_head", "mask_lens", "mask_tokens",
            "next_sentence",
        ),
        "core.settings": ("DEFAULT_MODEL", "KNOWN_MODELS"),
        "core.similarity.pairs": ("PairContributions", "compare_pairs", "pair_contributions"),
        "core.tokens": ("Encoding", "encode"),
    })

__all__ = [
    "IntegratedGradients",
    "attention_flow",
    "attention_rollout",
    "blank_out",
    "integrated_gradients",
    "norm_weighted_attention",
    "CLARK_2019",
    "EncoderSteps",
    "HeadAtlas",
    "Masking",
    "NextSentence",
    "NoPretrainingHeadError",
    "Prediction",
    "corpus_head_atlas",
    "encoder_steps",
    "encoder_steps_of",
    "fill_mask",
    "finetuning_patterns",
    "has_mlm_head",
    "has_nsp_head",
    "head_atlas",
    "head_slice",
    "mask_lens",
    "mask_tokens",
    "next_sentence",
    "pooler_steps",
    "residual_shares",
    "token_trajectory",
    "without_specials",
    "layer_similarity",
    "LayerProbe",
    "layer_probe",
    "FineTuneRun",
    "FineTuneTask",
    "fine_tune",
    "PairContributions",
    "compare_pairs",
    "pair_contributions",
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
