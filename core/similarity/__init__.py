"""Cosine similarity, stage by stage: the Similarity page's core, grouped by subject.

    core.similarity.choices     which stages and token positions a view can compare
    core.similarity.anisotropy  corpus baselines, and cosines read raw / adjusted / standardised
    core.similarity.cosines     token x token cosines, words in context, one dimension's share
    core.similarity.sentences   sentence A against sentence B, three ways of pooling
    core.similarity.pairs       a pair's cosine split per token pair; many pairs at once
    core.similarity.pair_lists  lists of pairs as pasted or uploaded; the results as CSV
    core.similarity.pair_examples  built-in pairs, with scores written for this explorer
"""

from typing import TYPE_CHECKING

from core.lazy import lazy_names

if TYPE_CHECKING:
    from core.similarity.anisotropy import (
        CorpusStats,
        StageStats,
        anisotropy_table,
        corpus_statistics,
        rogue_dimensions,
        token_cosines,
        unrelated_level,
    )
    from core.similarity.choices import (
        default_tokens,
        depth_stages,
        real_positions,
        segment_positions,
        similarity_stages,
    )
    from core.similarity.cosines import (
        Dominance,
        TokenRef,
        dominance,
        norm_dominance,
        standardised_cosine,
        token_curve,
        token_matrix,
        top_dimensions,
    )
    from core.similarity.pair_lists import PairList, read_file, read_text, results_csv
    from core.similarity.pairs import PairContributions, compare_pairs, pair_contributions
    from core.similarity.sentences import (
        SentenceComparison,
        compare_sentences,
        encoder_max_length,
        sentence_embedding,
    )

# Imported from its module when first asked for (core/lazy.py): importing this package
# imports none of them. A type checker reads the imports above instead.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_names(globals(), {
        "core.similarity.anisotropy": (
            "CorpusStats", "StageStats", "anisotropy_table", "corpus_statistics",
            "rogue_dimensions", "token_cosines", "unrelated_level",
        ),
        "core.similarity.choices": (
            "default_tokens", "depth_stages", "real_positions", "segment_positions",
            "similarity_stages",
        ),
        "core.similarity.cosines": (
            "Dominance", "TokenRef", "dominance", "norm_dominance", "standardised_cosine",
            "token_curve", "token_matrix", "top_dimensions",
        ),
        "core.similarity.pair_lists": ("PairList", "read_file", "read_text", "results_csv"),
        "core.similarity.pairs": ("PairContributions", "compare_pairs", "pair_contributions"),
        "core.similarity.sentences": (
            "SentenceComparison", "compare_sentences", "encoder_max_length", "sentence_embedding",
        ),
    })

__all__ = [
    "CorpusStats", "Dominance", "PairContributions", "PairList", "SentenceComparison",
    "StageStats", "TokenRef", "anisotropy_table", "compare_pairs", "compare_sentences",
    "corpus_statistics", "default_tokens", "depth_stages", "dominance", "encoder_max_length",
    "norm_dominance", "pair_contributions", "read_file", "read_text", "real_positions",
    "results_csv", "rogue_dimensions", "segment_positions", "sentence_embedding",
    "similarity_stages", "standardised_cosine", "token_cosines", "token_curve", "token_matrix",
    "top_dimensions", "unrelated_level",
]
