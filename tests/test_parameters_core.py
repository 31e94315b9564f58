"""Parameter counts: the formula against models built by transformers, the tutorial's hand count,
the live model's breakdown, custom sizes and the architecture sketch."""

from __future__ import annotations

import random

import pytest
import torch
from torch import nn
from transformers import BertConfig

from core import analyze
from core.parameters.counting import (
    closed_form_latex,
    count_from_config,
    group_totals,
    hand_formula_terms,
    omitted_terms,
    parameter_terms,
    with_numbers,
)
from core.parameters.listing import (
    blocks,
    filter_parameters,
    meta_count,
    meta_model,
    named_parameter_list,
    reconcile,
    tree_nodes,
)
from core.parameters.presets import (
    LIMITS,
    PRESETS,
    check_sizes,
    config_from_sizes,
    preset_config,
    presets_frame,
    sizes_from_config,
    validate_sizes,
    whole_number,
)
from core.parameters.tables import breakdown_frame
from pages.parameters.figures import architecture_dot
from tests.conftest import tiny_config

# Reference figures from DESIGN.md (the tutorials').
DESIGN_COUNTS = {
    "bert-base-uncased": 109_482_240,
    "bert-base-chinese": 102_267_648,
    "bert-large-uncased": 335_141_888,
    "bert-base-multilingual-cased": 177_853_440,
}
SHIPPED_COUNT = 22_713_216
HAND_FORMULA_CHINESE = 102_145_536
HAND_GAP_CHINESE = 122_112


def numel(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def random_configs(count: int = 20, seed: int = 1234) -> list[tuple[BertConfig, bool]]:
    """Valid random BERT configs (hidden a multiple of heads), with or without the pooler."""
    rng = random.Random(seed)
    configs = []
    for _ in range(count):
        heads = rng.randint(1, 8)
        config = BertConfig(
            num_hidden_layers=rng.randint(1, 6),
            num_attention_heads=heads,
            hidden_size=heads * rng.randint(1, 24),
            intermediate_size=rng.randint(1, 200),
            vocab_size=rng.randint(1, 5000),
            max_position_embeddings=rng.randint(1, 1024),
            type_vocab_size=rng.randint(1, 5),
        )
        configs.append((config, rng.random() < 0.8))
    return configs


def hand_count_by_module(model: nn.Module) -> tuple[int, int]:
    """(tables and weight matrices, everything else) of a model, read off its modules' types."""
    weights = sum(
        m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear | nn.Embedding)
    )
    return weights, numel(model) - weights


@pytest.mark.parametrize("name", list(DESIGN_COUNTS))
def test_presets_count_the_design_figures_by_formula_and_on_meta(name):
    config = preset_config(name)
    model = meta_model(config)
    assert next(model.parameters()).device.type == "meta"
    assert count_from_config(config) == DESIGN_COUNTS[name]
    assert numel(model) == DESIGN_COUNTS[name]
    assert meta_count(config) == DESIGN_COUNTS[name]


def test_presets_carry_the_published_sizes():
    assert set(PRESETS) == set(DESIGN_COUNTS)
    assert preset_config("bert-base-chinese").vocab_size == 21128
    assert preset_config("bert-base-multilingual-cased").vocab_size == 119547
    large = preset_config("bert-large-uncased")
    assert (large.num_hidden_layers, large.hidden_size, large.num_attention_heads) == (24, 1024, 16)
    assert large.intermediate_size == 4096
    base = preset_config("bert-base-uncased")
    assert (base.num_hidden_layers, base.hidden_size, base.intermediate_size) == (12, 768, 3072)


@pytest.mark.parametrize(("config", "with_pooler"), random_configs())
def test_formula_equals_meta_model_for_random_configs(config, with_pooler):
    model = meta_model(config, with_pooler)
    assert count_from_config(config, with_pooler) == numel(model)
    # Term by term too: each term is what the model holds in that block.
    rows = reconcile(parameter_terms(config, with_pooler), blocks(named_parameter_list(model)))
    assert all(r.term is not None and r.matches for r in rows)


@pytest.mark.parametrize(("config", "with_pooler"), random_configs(4, seed=7))
def test_group_totals_are_the_models_three_parts(config, with_pooler):
    model = meta_model(config, with_pooler)
    totals = group_totals(parameter_terms(config, with_pooler))
    assert totals["embeddings"] == numel(model.embeddings)
    assert totals["encoder.layer"] == numel(model.encoder)
    assert totals["pooler"] == (numel(model.pooler) if with_pooler else 0)


def test_cross_attention_decoder_is_counted():
    config = tiny_config(is_decoder=True, add_cross_attention=True)
    assert count_from_config(config) == numel(meta_model(config))


def test_tutorial_hand_formula_for_bert_base_chinese():
    config = preset_config("bert-base-chinese")
    hand = sum(t.total for t in hand_formula_terms(config))
    gap = sum(t.total for t in omitted_terms(config))
    assert hand == HAND_FORMULA_CHINESE
    assert gap == HAND_GAP_CHINESE
    assert hand + gap == DESIGN_COUNTS["bert-base-chinese"]


@pytest.mark.parametrize(("config", "with_pooler"), random_configs(6, seed=7))
def test_hand_formula_is_tables_and_matrices_and_the_gap_is_the_rest(config, with_pooler):
    """The hand formula counts exactly the weights of nn.Embedding and nn.Linear; biases and
    LayerNorm are the gap (checked on the modules of the model itself, not on our terms)."""
    weights, rest = hand_count_by_module(meta_model(config, with_pooler))
    assert sum(t.total for t in hand_formula_terms(config, with_pooler)) == weights
    assert sum(t.total for t in omitted_terms(config, with_pooler)) == rest


def test_live_model_breakdown_adds_up_to_the_model(bundle):
    model = bundle.model
    rows = named_parameter_list(model)
    assert [r.name for r in rows] == [name for name, _ in model.named_parameters()]
    model_blocks = blocks(rows)
    total = sum(p.numel() for p in model.parameters())
    assert total == SHIPPED_COUNT
    assert sum(b.count for b in model_blocks) == total
    # Each block is one module of the model: its count is that module's own parameter count.
    for b in model_blocks:
        assert b.count == numel(model.get_submodule(b.path)), b.path
    groups = {(b.group, b.module) for b in model_blocks}
    assert ("embeddings", "position_embeddings") in groups
    assert ("encoder.layer", "intermediate.dense") in groups
    assert ("pooler", "pooler.dense") in groups
    assert len(model_blocks) == 4 + 8 * bundle.config.num_hidden_layers + 1


def test_live_model_reconciles_with_the_formula(bundle):
    rows = reconcile(parameter_terms(bundle.config), blocks(named_parameter_list(bundle.model)))
    assert all(r.term is not None and r.matches for r in rows)
    assert count_from_config(bundle.config) == sum(p.numel() for p in bundle.model.parameters())


def test_breakdown_table_per_module_and_per_layer(bundle):
    model_blocks = blocks(named_parameter_list(bundle.model))
    n = bundle.config.num_hidden_layers
    summed = breakdown_frame(model_blocks)
    assert len(summed) == 4 + 8 + 1
    assert int(summed["parameters"].sum()) == SHIPPED_COUNT
    assert summed["share"].sum() == pytest.approx(1.0)
    query = summed[summed["module"] == "encoder.layer.*.attention.self.query"].iloc[0]
    per_layer = numel(bundle.model.encoder.layer[0].attention.self.query)
    assert (query["per_instance"], query["instances"], query["parameters"]) == (
        per_layer, n, n * per_layer)
    apart = breakdown_frame(model_blocks, per_layer=True)
    assert len(apart) == 4 + 8 * n + 1
    assert int(apart["parameters"].sum()) == SHIPPED_COUNT
    assert apart["stage"].tolist().count("layer_1") == 8


def test_tree_nodes_parents_are_sums_of_children(bundle):
    nodes = tree_nodes(blocks(named_parameter_list(bundle.model)))
    values = dict(zip(nodes.ids, nodes.values, strict=True))
    assert values["BertModel"] == SHIPPED_COUNT
    children: dict[str, int] = {}
    for parent, value in zip(nodes.parents, nodes.values, strict=True):
        if parent:
            children[parent] = children.get(parent, 0) + value
    assert children == {k: values[k] for k in children}
    assert values["encoder/layer_1"] == numel(bundle.model.encoder.layer[0])
    assert values["embeddings"] == numel(bundle.model.embeddings)


def test_filter_is_plain_text_and_ignores_case():
    rows = named_parameter_list(meta_model(preset_config("bert-large-uncased")))
    layer1 = filter_parameters(rows, "layer.1.")
    assert layer1 and all(".layer.1." in r.name for r in layer1)  # not layer.10. .. layer.19.
    both = filter_parameters(rows, "LAYERNORM bias")
    assert {r.name for r in both} == {
        name for name, _ in meta_model(preset_config("bert-large-uncased")).named_parameters()
        if "layernorm" in name.lower() and "bias" in name
    }
    assert filter_parameters(rows, "[(") == []
    assert filter_parameters(rows, ".*") == []
    assert len(filter_parameters(rows, "  ")) == len(rows)


def evaluate_latex(lines: list[str]) -> int:
    """Evaluate the numeric lines of the closed form as Python arithmetic."""
    text = " ".join(lines)
    for old, new in (("&=", ""), ("&", ""), (r"\quad", ""), (r"\cdot", "*"), (r"\,", "*"),
                     ("^", "**"), ("{,}", "")):
        text = text.replace(old, new)
    return eval(text, {"__builtins__": {}})  # only digits, + * ( ): the caller checks the lines


@pytest.mark.parametrize(("config", "with_pooler"), random_configs(8, seed=99))
def test_closed_form_evaluates_to_the_meta_count(config, with_pooler):
    latex = closed_form_latex(config, with_pooler)
    body = latex.removeprefix(r"\begin{aligned}").removesuffix(r"\end{aligned}")
    lines = body.split(r" \\ ")
    numeric, parts_line = lines[1:-1], lines[-1]
    for line in numeric:
        assert set(line) <= set("0123456789+*()^ &=\\,quadcot"), line
    expected = numel(meta_model(config, with_pooler))
    assert evaluate_latex(numeric) == expected
    parts, total = parts_line.removeprefix("&= ").replace("{,}", "").split(" = ")
    assert sum(int(x) for x in parts.split(" + ")) == int(total) == expected


def test_closed_form_is_withheld_for_cross_attention():
    assert closed_form_latex(tiny_config(is_decoder=True, add_cross_attention=True)) is None


def test_presets_frame_counts():
    frame = presets_frame({name: meta_count(preset_config(name)) for name in PRESETS})
    assert frame.set_index("model")["from config"].to_dict() == DESIGN_COUNTS
    assert frame["equal"].all()
    large = frame.set_index("model").loc["bert-large-uncased"]
    assert large[["N", "h", "heads", "i"]].tolist() == [24, 1024, 16, 4096]


def test_formula_with_numbers():
    config = tiny_config()
    assert with_numbers("h*h + h", config) == "32×32 + 32"
    assert with_numbers("2h", config) == "2×32"
    assert with_numbers("i*h + h", config) == "37×32 + 32"
    assert with_numbers("V*h", config) == "30522×32"


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("hidden", 770, "not divisible by 12 heads"),
        ("hidden", 0, "at least 1"),
        ("layers", -3, "at least 1"),
        ("heads", "twelve", "whole number"),
        ("vocab", "1e5", "whole number"),
        ("types", True, "whole number"),
        ("layers", 10**30, "capped"),
        ("intermediate", "999999999999999999999", "capped"),
    ],
)
def test_impossible_sizes_are_refused_with_a_reason(field, value, fragment):
    values = {**vars(sizes_from_config(preset_config("bert-base-uncased"))), field: value}
    sizes, problems = check_sizes(values)
    assert sizes is None
    assert len(problems) == 1 and fragment in problems[0]


def test_divisibility_message_suggests_valid_sizes():
    values = {**vars(sizes_from_config(preset_config("bert-base-uncased"))), "hidden": 770}
    (message,) = validate_sizes(values)
    assert "768" in message and "780" in message and 768 % 12 == 0 and 780 % 12 == 0


def test_valid_sizes_round_trip_and_count():
    for name in PRESETS:
        config = preset_config(name)
        texts = {k: f"{v:,}" for k, v in vars(sizes_from_config(config)).items()}  # "30,522"
        sizes, problems = check_sizes(texts)
        assert problems == [] and sizes == sizes_from_config(config)
        assert count_from_config(config_from_sizes(sizes)) == DESIGN_COUNTS[name]
    at_caps = {name: limit.cap for name, limit in LIMITS.items()}
    sizes, problems = check_sizes(at_caps)  # 16384 is divisible by 256 heads
    assert problems == [] and sizes is not None
    assert whole_number(" 30_522 ") == 30522 and whole_number("3.5") is None


def test_largest_allowed_model_builds_fast_on_meta():
    """The caps keep a custom model cheap: the largest one builds on the meta device quickly."""
    import time

    sizes, _ = check_sizes({name: limit.cap for name, limit in LIMITS.items()})
    start = time.perf_counter()
    assert meta_count(config_from_sizes(sizes)) == count_from_config(config_from_sizes(sizes))
    assert time.perf_counter() - start < 10


def test_architecture_sketch_has_the_live_shapes(bundle):
    result = analyze(bundle, "This is a test sentence", attentions=True)
    model, cfg = bundle.model, bundle.config
    T, h = len(result.tokens), cfg.hidden_size
    dot = architecture_dot(cfg, T)
    attn = model.encoder.layer[0].attention.self
    with torch.inference_mode():
        x = torch.from_numpy(result.stages["LayerNorm"])[None]                      # (1, T, h)
        q = attn.query(x).view(1, T, attn.num_attention_heads, attn.attention_head_size)
        up = model.encoder.layer[0].intermediate(x)                                 # (1, T, i)
    expected = [
        [1, T],
        [1, *result.stages["layer_1"].shape],                 # [1, T, h]
        list(q.transpose(1, 2).shape),                        # [1, heads, T, head_dim]
        [1, *result.attentions.shape[1:]],                    # [1, heads, T, T]
        list(up.shape),                                       # [1, T, i]
        [1, *result.pooler_output.shape],                     # [1, h]
    ]
    for shape in expected:
        assert f"→ {shape}" in dot, shape
    assert f"encoder.layer × {cfg.num_hidden_layers}" in dot
    assert f"word {cfg.vocab_size:,}×{h}" in dot
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")


def test_every_core_word_the_page_shows_is_in_its_catalog():
    """Core writes English; the page's figures mark the same words for translation."""
    from core.parameters.architecture import architecture_steps
    from core.parameters.counting import BLOCK_LABELS
    from core.parameters.presets import size_problems
    from pages.parameters.figures import CORE_WORDS, TRANSLATED_PARAMS

    config = tiny_config(is_decoder=True, add_cross_attention=True)
    words = set(BLOCK_LABELS.values()) | {"not in the formula"}
    words |= {t.label for t in hand_formula_terms(config) + omitted_terms(config)}
    words |= {limit.label for limit in LIMITS.values()} | {limit.why for limit in LIMITS.values()}
    words |= {line.template for step in architecture_steps(config, 5) for line in step.lines}
    good = vars(sizes_from_config(preset_config("bert-base-uncased")))
    for field, value in [("hidden", 770), ("hidden", 0), ("heads", "x"), ("layers", 10**9)]:
        for problem in size_problems({**good, field: value})[1]:
            words.add(problem.template)
            words |= {v for k, v in problem.params.items() if k in TRANSLATED_PARAMS}
    assert words <= CORE_WORDS, sorted(words - CORE_WORDS)
