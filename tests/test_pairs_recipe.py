"""Each model's own sentence recipe: small random BertModel folders written here with every
pooling config sentence-transformers knows (and Normalize, a prompt, max_seq_length), compared
with ``SentenceTransformer(folder).encode`` on the same folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import BertModel

from core import compare_pairs, load_model, pair_contributions
from core.similarity.pairs import own_recipe, recipe_of
from core.similarity.recipe import MEAN_RECIPE, Pooling, read_recipe
from tests.conftest import tiny_config

PAIRS = [
    ("A man is playing the guitar.", "Someone is strumming a guitar."),
    ("The cat sleeps.", "Interest rates rose again this quarter, said the bank."),
    ("Hi", "A much longer sentence that runs past the short limit of sixteen tokens set here."),
    ('"Quoted," she said.', "我爱你"),
]
LEGACY = {"cls": "pooling_mode_cls_token", "mean": "pooling_mode_mean_tokens",
          "max": "pooling_mode_max_tokens", "mean_sqrt_len_tokens":
          "pooling_mode_mean_sqrt_len_tokens", "weightedmean": "pooling_mode_weightedmean_tokens",
          "lasttoken": "pooling_mode_lasttoken"}


def write_folder(folder: Path, tokenizer, pooling: str, normalize: bool = True,
                 prompt: str | None = None, include_prompt: bool = True,
                 limit: int = 16) -> Path:
    """A random 2-layer BertModel with sentence-transformers' files, as a hub model has them
    (the Pooling config in the older switches' form)."""
    torch.manual_seed(1)
    BertModel(tiny_config()).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    modules = [{"idx": 0, "name": "0", "path": "",
                "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                        "type": "sentence_transformers.models.Normalize"})
        (folder / "2_Normalize").mkdir()
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "1_Pooling").mkdir()
    config = {"word_embedding_dimension": 32, **{key: mode == pooling
                                                 for mode, key in LEGACY.items()},
              "include_prompt": include_prompt}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(config))
    (folder / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": limit, "do_lower_case": False}))
    if prompt is not None:
        (folder / "config_sentence_transformers.json").write_text(json.dumps(
            {"prompts": {"query": prompt, "document": ""}, "default_prompt_name": "query"}))
    return folder


def st_cosines(folder: Path, pairs) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(str(folder), device="cpu")
    a = encoder.encode([p[0] for p in pairs], convert_to_numpy=True).astype(np.float64)
    b = encoder.encode([p[1] for p in pairs], convert_to_numpy=True).astype(np.float64)
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.parametrize("pooling", list(LEGACY))
def test_every_pooling_equals_sentence_transformers(tmp_path, bundle, pooling):
    folder = write_folder(tmp_path / pooling, bundle.tokenizer, pooling,
                          normalize=pooling != "max")
    recipe = read_recipe(folder)
    assert recipe.own and recipe.pooling == (Pooling(pooling),)
    assert recipe.normalize is (pooling != "max") and recipe.max_seq_length == 16
    model = load_model(str(folder))
    frame = compare_pairs(model, PAIRS, batch_size=3)
    np.testing.assert_allclose(frame["cosine"], st_cosines(folder, PAIRS), atol=1e-5)
    # One pair's headline figure is the same recipe.
    a, b = PAIRS[1]
    contrib = pair_contributions(model, a, b)
    assert contrib.model_cosine == pytest.approx(frame["cosine"].iloc[1], abs=1e-6)
    assert contrib.recipe == recipe
    assert own_recipe(model.name) is (pooling == "mean")


@pytest.mark.parametrize("include_prompt", [True, False])
def test_a_prompt_is_put_before_each_text(tmp_path, bundle, include_prompt):
    folder = write_folder(tmp_path / "prompt", bundle.tokenizer, "mean", prompt="query: ",
                          include_prompt=include_prompt, limit=24)
    recipe = read_recipe(folder)
    assert recipe.prompt == "query: " and recipe.prompt_name == "query"
    assert not recipe.mean_only        # the split of the plain mean is not this figure
    model = load_model(str(folder))
    frame = compare_pairs(model, PAIRS)
    np.testing.assert_allclose(frame["cosine"], st_cosines(folder, PAIRS), atol=1e-5)


def test_several_modes_are_concatenated(tmp_path, bundle):
    folder = write_folder(tmp_path / "two", bundle.tokenizer, "cls")
    config = json.loads((folder / "1_Pooling" / "config.json").read_text())
    config["pooling_mode_mean_tokens"] = True
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(config))
    assert read_recipe(folder).pooling == (Pooling.CLS, Pooling.MEAN)
    model = load_model(str(folder))
    np.testing.assert_allclose(compare_pairs(model, PAIRS)["cosine"], st_cosines(folder, PAIRS),
                               atol=1e-5)


def test_no_recipe_is_mean_pooling(tmp_path, bundle, tiny_bundle):
    assert recipe_of(tiny_bundle.name) == MEAN_RECIPE and not MEAN_RECIPE.own
    assert read_recipe(tmp_path) == MEAN_RECIPE            # a folder with no modules.json
    assert recipe_of(bundle.name).own and recipe_of(bundle.name).pooling == (Pooling.MEAN,)
    (tmp_path / "modules.json").write_text("not json")
    assert read_recipe(tmp_path) == MEAN_RECIPE


def test_the_recipe_files_are_fetched_with_the_model():
    """A hub model's recipe comes down with it (a few small JSON files, one in a folder), and
    nothing else of sentence-transformers' (ONNX, other formats)."""
    from core.model_files import wanted_files

    listing = ["config.json", "vocab.txt", "model.safetensors", "modules.json",
               "1_Pooling/config.json", "sentence_bert_config.json",
               "config_sentence_transformers.json", "onnx/model.onnx", "pytorch_model.bin"]
    assert wanted_files(listing) == [
        "config.json", "vocab.txt", "modules.json", "sentence_bert_config.json",
        "config_sentence_transformers.json", "1_Pooling/config.json", "model.safetensors"]
