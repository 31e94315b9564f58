"""Two models side by side: how alike their layers are (linear CKA), and the control that needs
no download, a model with random weights.

    from core import load_model, layer_similarity
    from core.compare import random_weights
    trained = load_model()
    result = layer_similarity(trained, random_weights(trained), ["A heron stood on the bank."])
    result.cka            # (7, 7): the trained model's layers against the random copy's

    core.compare.cka              linear CKA in feature space (cka_matrix: float32 products
                                  summed in float64; linear_cka: float64)
    core.compare.layers           layer_similarity: rows matched token for token, or by word
    core.compare.pairs            compare_on_pairs: two models on scored pairs, a paired
                                  bootstrap interval of the difference
    core.compare.random_weights   random_weights
"""

from core.compare.cka import cka_matrix, linear_cka
from core.compare.layers import LayerSimilarity, MapChecks, RowUnit, layer_similarity, map_checks
from core.compare.pairs import PairsComparison, compare_on_pairs, disagreements
from core.compare.random_weights import random_name, random_weights, trained_name

__all__ = ["LayerSimilarity", "MapChecks", "PairsComparison", "RowUnit", "cka_matrix",
           "compare_on_pairs", "disagreements", "layer_similarity", "linear_cka", "map_checks",
           "random_name", "random_weights", "trained_name"]
