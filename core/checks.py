"""Published figures, reproduced live: one row per check, with its source, our value and a verdict.

The computation only: functions that return ``CheckRow`` records. The /checks page draws them
(pages/checks/), and the terminal command prints them (serving/checks.py:
``python3 -m serving.checks [--sts FILE]``).

Every published figure is a constant here with its source named in words (``Published``).
``published_checks(bundle)`` computes our value for each one the way the app does (the shipped
all-MiniLM-L6-v2's sentence vector through ``core.similarity.sentences``, the parameter counts
through ``core.parameters``, the tokenizer through ``core.tokens``, [MASK] through
``core.pretraining``) and compares. A check whose model is not on this machine is not run: its row
says which model and the command that prepares it (``core.settings.prepare_command``); nothing is
downloaded here. ``sts_check`` takes a list of scored pairs (the STS benchmark's test split, read by
``core.similarity.pair_lists``) and sets the cosine Spearman beside the published one.

Texts are English templates marked with ``N_`` (the app translates them; the terminal prints
them as they are); values are language-neutral text (numbers, tokens).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, TypeVar

from transformers import AutoTokenizer, BertConfig

from core.analysis import analyze
from core.errors import N_, InputError
from core.models import ModelBundle, load_model, local_folder
from core.parameters.counting import count_from_config, count_with_heads
from core.parameters.presets import preset_config
from core.pretraining import fill_mask
from core.settings import DEFAULT_MODEL, prepare_command
from core.similarity import pair_lists, pairs, sentences
from core.tokens import encode

COSINE_TOLERANCE = 5e-4      # the README prints 4 decimals
PROBABILITY_TOLERANCE = 5e-4  # the model card prints 4 decimals
SPEARMAN_TOLERANCE = 5e-4     # MTEB's figure, to 4 decimals


class Verdict(StrEnum):
    HELD = "held"
    EXPLAINED = "explained"      # a published figure that is off, and exactly why
    OFF = "off"
    NEEDS_MODEL = "needs_model"  # its model is not on this machine: not run
    NEEDS_FILE = "needs_file"    # the user supplies the data: not run


class Group(StrEnum):
    SENTENCES = "sentences"
    PARAMETERS = "parameters"
    TOKENS = "tokens"
    FILL_MASK = "fill_mask"
    BENCHMARK = "benchmark"


GROUP_LABELS = {
    Group.SENTENCES: N_("Sentence similarity"),
    Group.PARAMETERS: N_("Parameter counts"),
    Group.TOKENS: N_("Token ids"),
    Group.FILL_MASK: N_("Filling [MASK]"),
    Group.BENCHMARK: N_("Benchmark"),
}


V = TypeVar("V")


@dataclass(frozen=True)
class Published(Generic[V]):
    """A figure as its source printed it, and the source in words."""

    value: V
    source: str


# --- the published figures ----------------------------------------------------------------------

README_SOURCE = N_("sentence-transformers README (all-MiniLM-L6-v2's example)")
README_SENTENCES = ("The weather is lovely today.", "It's so sunny outside!",
                    "He drove to the stadium.")
README_COSINES = (   # (i, j) into README_SENTENCES: the README's similarity matrix, to 4 decimals
    ((0, 1), Published(0.6660, README_SOURCE)),
    ((0, 2), Published(0.1046, README_SOURCE)),
    ((1, 2), Published(0.1411, README_SOURCE)),
)

MINILM_PARAMETERS = Published(22_713_216, N_("all-MiniLM-L6-v2 model card (22.7M parameters)"))
UNCASED_PARAMETERS = Published(
    109_482_240, N_("BertModel's count, as tutorials print it (the BERT paper: 110M)"))
UNCASED_WITH_HEADS = Published(
    110_106_428, N_("bert-base-uncased model card (110M parameters, heads included)"))
CHINESE_PARAMETERS = Published(102_267_648,
                               N_("the parameter tutorial's printout (bert-base-chinese)"))
CHINESE_WITH_HEADS = Published(
    102_882_442, N_("bert-base-chinese's checkpoint, heads included"))
GOOGLE_110M = Published("110M", N_("Google's BERT README (BERT-Base, Chinese: 110M)"))

TEST_SENTENCE = "This is a test sentence"
TEST_SENTENCE_IDS = Published((101, 2023, 2003, 1037, 3231, 6251, 102),
                              N_("the embedding-layer tutorial's printout (bert-base-uncased)"))
CHINESE_SENTENCE = "我爱你"
CHINESE_TOKENS = Published(("[CLS]", "我", "爱", "你", "[SEP]"),
                           N_("the parameter tutorial's printout (bert-base-chinese)"))

FILL_MASK_TEXT = "Hello I'm a [MASK] model."
FILL_MASK_TOP5 = Published(
    (("fashion", 0.1073), ("role", 0.0877), ("new", 0.0534), ("super", 0.0467), ("fine", 0.0271)),
    N_("bert-base-uncased model card"))

STS_PAIRS = 1379
STS_SPEARMAN = Published(0.8203, N_("MTEB: STS benchmark, test split, 1,379 pairs"))
STS_EXPECTED = N_("the STS benchmark's test split (1,379 pairs): a CSV or TSV file with sentence "
                  "1, sentence 2 and the score (0 to 5) on each line")

PUBLISHED: tuple[Published[Any], ...] = (
    *(p for _, p in README_COSINES), MINILM_PARAMETERS, UNCASED_PARAMETERS, UNCASED_WITH_HEADS,
    CHINESE_PARAMETERS, CHINESE_WITH_HEADS, GOOGLE_110M, TEST_SENTENCE_IDS, CHINESE_TOKENS,
    FILL_MASK_TOP5, STS_SPEARMAN,
)

UNCASED, CHINESE = "bert-base-uncased", "bert-base-chinese"


# --- one row ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CheckRow:
    """One check as the table shows it. ``what`` and ``note`` are English templates filled with
    ``params``; ``published``, ``ours`` and ``off_by`` are language-neutral text."""

    key: str
    group: Group
    model: str
    what: str
    published: str
    source: str
    verdict: Verdict
    ours: str | None = None        # None: not run
    tolerance: float = 0.0         # 0: must be equal
    off_by: str | None = None      # the difference, when OFF
    difference: float | None = None  # |ours - published| (the largest, for several numbers)
    command: str | None = None     # what prepares the missing model
    note: str | None = None
    params: tuple[tuple[str, str], ...] = ()

    @property
    def ran(self) -> bool:
        return self.verdict in (Verdict.HELD, Verdict.EXPLAINED, Verdict.OFF)

    @property
    def held(self) -> bool:
        return self.verdict in (Verdict.HELD, Verdict.EXPLAINED)

    def text(self, template: str, translate: Callable[[str], str] = str) -> str:
        return translate(template).format(**dict(self.params))


def _number(value: float, decimals: int = 4) -> str:
    return f"{value:.{decimals}f}"


def _count(value: int) -> str:
    return f"{value:,}"


def _compare(value: float, published: float, tolerance: float) -> tuple[Verdict, str | None]:
    diff = value - published
    if abs(diff) <= tolerance and math.isfinite(value):
        return Verdict.HELD, None
    return Verdict.OFF, f"{diff:+.4f}" if math.isfinite(diff) else "nan"


def _exact(value: int, published: int) -> tuple[Verdict, str | None]:
    return (Verdict.HELD, None) if value == published else (Verdict.OFF, f"{value - published:+,}")


def _needs(key: str, group: Group, model: str, what: str, published: str, source: str,
           params: tuple[tuple[str, str], ...] = (), tolerance: float = 0.0) -> CheckRow:
    return CheckRow(key, group, model, what, published, source, Verdict.NEEDS_MODEL,
                    tolerance=tolerance, command=prepare_command(model), params=params)


# --- the checks ---------------------------------------------------------------------------------

def readme_cosines(bundle: ModelBundle) -> list[CheckRow]:
    """The README's three cosines, computed the model's own way: each sentence run alone, the
    last layer mean-pooled over its tokens and L2-normalised (``sentences.sentence_embedding``,
    what the Similarity and Pairs pages show as the model's figure)."""
    limit = pairs.sentence_limit(bundle)
    vectors = [sentences.sentence_embedding(analyze(bundle, s, max_length=limit,
                                                    attentions=False))
               for s in README_SENTENCES]
    rows = []
    for (i, j), published in README_COSINES:
        value = float(vectors[i] @ vectors[j])
        verdict, off_by = _compare(value, float(published.value), COSINE_TOLERANCE)
        rows.append(CheckRow(
            f"readme_cosine_{i}{j}", Group.SENTENCES, DEFAULT_MODEL,
            N_("cosine of “{a}” and “{b}”"), _number(float(published.value)), published.source,
            verdict, ours=_number(value), tolerance=COSINE_TOLERANCE, off_by=off_by,
            difference=abs(value - float(published.value)),
            params=(("a", README_SENTENCES[i]), ("b", README_SENTENCES[j]))))
    return rows


def _config_of(name: str) -> tuple[BertConfig, bool]:
    """The model's config.json when it is on this machine, else its published values typed in
    (core.parameters.presets); and whether it was the machine's copy."""
    folder = local_folder(name)
    if folder is not None and (folder / "config.json").is_file():
        return BertConfig.from_pretrained(str(folder)), True
    return preset_config(name), False


def parameter_counts(bundle: ModelBundle) -> list[CheckRow]:
    """Each model's count from its config (no weights needed), with and without the heads; the
    shipped model's also from its loaded weights; and Google's "110M" for the Chinese model."""
    rows = []
    counted = count_from_config(bundle.config)
    weights = sum(p.numel() for p in bundle.model.parameters())
    verdict, off_by = _exact(counted if counted == weights else weights,
                             int(MINILM_PARAMETERS.value))
    rows.append(CheckRow(
        "parameters_minilm", Group.PARAMETERS, DEFAULT_MODEL, N_("parameters (BertModel)"),
        _count(int(MINILM_PARAMETERS.value)), MINILM_PARAMETERS.source, verdict,
        ours=_count(counted), off_by=off_by,
        note=N_("from its config.json; its loaded weights hold {weights}"),
        params=(("weights", _count(weights)),)))
    configs = {name: _config_of(name) for name in (UNCASED, CHINESE)}
    for name, plain, heads in ((UNCASED, UNCASED_PARAMETERS, UNCASED_WITH_HEADS),
                               (CHINESE, CHINESE_PARAMETERS, CHINESE_WITH_HEADS)):
        config, here = configs[name]
        where = (N_("from its config.json on this machine") if here else
                 N_("from its published config.json: no download needed"))
        for key, what, published, value in (
                ("plain", N_("parameters (BertModel)"), plain, count_from_config(config)),
                ("heads", N_("parameters with the pretraining heads"), heads,
                 count_with_heads(config))):
            verdict, off_by = _exact(value, int(published.value))
            rows.append(CheckRow(f"parameters_{name}_{key}", Group.PARAMETERS, name, what,
                                 _count(int(published.value)), published.source, verdict,
                                 ours=_count(value), off_by=off_by, note=where))
    rows.append(google_110m(configs[UNCASED][0], configs[CHINESE][0]))
    return rows


def google_110m(uncased: BertConfig, chinese: BertConfig) -> CheckRow:
    """Google's "110M" for bert-base-chinese is the English BERT-Base's size: the Chinese model
    has exactly the rows of its smaller vocabulary fewer."""
    english, ours = count_from_config(uncased), count_from_config(chinese)
    rows_fewer = uncased.vocab_size - chinese.vocab_size
    gap = rows_fewer * chinese.hidden_size
    same_otherwise = english - ours == gap and uncased.hidden_size == chinese.hidden_size
    return CheckRow(
        "parameters_110m", Group.PARAMETERS, CHINESE, N_("Google's “110M” against its count"),
        str(GOOGLE_110M.value), GOOGLE_110M.source,
        Verdict.EXPLAINED if same_otherwise else Verdict.OFF,
        ours=f"{_count(ours)} = {_count(english)} − {_count(gap)}",
        off_by=None if same_otherwise else f"{english - ours - gap:+,}",
        note=N_("110M is the English BERT-Base's size ({english}); the Chinese vocabulary has "
                "{fewer} fewer rows: ({v_en} − {v_zh}) × {h} = {gap}, exactly the gap"),
        params=(("english", _count(english)), ("fewer", _count(rows_fewer)),
                ("v_en", _count(uncased.vocab_size)), ("v_zh", _count(chinese.vocab_size)),
                ("h", str(chinese.hidden_size)), ("gap", _count(gap))))


def token_ids(bundle: ModelBundle) -> list[CheckRow]:
    """The tutorials' tokenizer printouts: the English sentence with the shipped model's uncased
    vocabulary (bert-base-uncased's, token for token), 我爱你 with bert-base-chinese's."""
    ids = tuple(encode(bundle, TEST_SENTENCE).input_ids)
    published = tuple(TEST_SENTENCE_IDS.value)
    rows = [CheckRow(
        "tokens_test_sentence", Group.TOKENS, DEFAULT_MODEL, N_("input_ids of “{text}”"),
        _ids(published), TEST_SENTENCE_IDS.source,
        Verdict.HELD if ids == published else Verdict.OFF, ours=_ids(ids),
        off_by=None if ids == published else N_("other ids"),
        note=N_("the same uncased vocabulary as bert-base-uncased"),
        params=(("text", TEST_SENTENCE),))]
    tokens = tuple(CHINESE_TOKENS.value)
    what, params = N_("tokens of “{text}”"), (("text", CHINESE_SENTENCE),)
    folder = local_folder(CHINESE)
    if folder is None:
        rows.append(_needs("tokens_chinese", Group.TOKENS, CHINESE, what, " ".join(tokens),
                           CHINESE_TOKENS.source, params))
        return rows
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    chinese_ids = tokenizer(CHINESE_SENTENCE)["input_ids"]
    ours = tuple(tokenizer.convert_ids_to_tokens(chinese_ids))
    held = ours == tokens
    rows.append(CheckRow(
        "tokens_chinese", Group.TOKENS, CHINESE, what, " ".join(tokens), CHINESE_TOKENS.source,
        Verdict.HELD if held else Verdict.OFF, ours=" ".join(ours) + f"  {_ids(chinese_ids)}",
        off_by=None if held else N_("other tokens"), params=params))
    return rows


def _ids(ids: Sequence[int]) -> str:
    return "[" + ", ".join(str(i) for i in ids) + "]"


def _top5(predictions: Sequence[tuple[str, float]]) -> str:
    return ", ".join(f"{token} {p:.4f}" for token, p in predictions)


def fill_mask_check(load: Callable[[str], ModelBundle] = load_model) -> CheckRow:
    """The bert-base-uncased model card's fill-mask example: the top 5 tokens in order, each
    probability within ``PROBABILITY_TOLERANCE``. Run only when the model is on this machine."""
    published = tuple(FILL_MASK_TOP5.value)
    what, params = N_("top 5 for “{text}”"), (("text", FILL_MASK_TEXT),)
    if local_folder(UNCASED) is None:
        return _needs("fill_mask", Group.FILL_MASK, UNCASED, what, _top5(published),
                      FILL_MASK_TOP5.source, params, PROBABILITY_TOLERANCE)
    predicted = [(p.token, p.probability) for p in fill_mask(load(UNCASED), FILL_MASK_TEXT)[0]]
    same_tokens = [t for t, _ in predicted] == [t for t, _ in published]
    difference = max(abs(p - q) for (_, p), (_, q) in zip(predicted, published, strict=True))
    held = same_tokens and difference <= PROBABILITY_TOLERANCE
    off_by = None if held else (f"{difference:.4f}" if same_tokens else N_("other tokens"))
    return CheckRow("fill_mask", Group.FILL_MASK, UNCASED, what, _top5(published),
                    FILL_MASK_TOP5.source, Verdict.HELD if held else Verdict.OFF,
                    ours=_top5(predicted), tolerance=PROBABILITY_TOLERANCE, off_by=off_by,
                    difference=difference, params=params)


STS_WHAT = N_("cosine Spearman on the STS benchmark's test split")


def sts_needed() -> CheckRow:
    """The STS row before a file is given: what to give."""
    return CheckRow("sts", Group.BENCHMARK, DEFAULT_MODEL, STS_WHAT,
                    _number(float(STS_SPEARMAN.value)), STS_SPEARMAN.source, Verdict.NEEDS_FILE,
                    tolerance=SPEARMAN_TOLERANCE, note=STS_EXPECTED)


def sts_check(bundle: ModelBundle, pair_list: Sequence[tuple[str, str]],
              scores: Sequence[float | None],
              progress: Callable[[int, int], None] | None = None) -> CheckRow:
    """The model's cosine (``compare_pairs``: its own recipe, A and B run alone) for every pair,
    Spearman's rho against the scores, beside MTEB's figure. InputError with fewer than three
    scored pairs. ``progress(done, total)`` in sentences, after every batch."""
    scored = sum(1 for s in scores if s is not None)
    if scored < 3:
        raise InputError(N_("Spearman's rho needs a score on at least three lines; this list "
                            "has {n}. Give {expected}."), n=scored, expected=STS_EXPECTED)
    frame = pairs.compare_pairs(bundle, list(pair_list), progress=progress)
    agreement = pair_lists.score_agreement(list(frame["cosine"]), list(scores))
    if agreement is None:
        raise InputError(N_("The scores or the cosines are all the same: there is no order to "
                            "compare. Give {expected}."), expected=STS_EXPECTED)
    value = agreement.spearman
    verdict, off_by = _compare(value, float(STS_SPEARMAN.value), SPEARMAN_TOLERANCE)
    note = (N_("{n} scored pairs, as in the test split") if agreement.n == STS_PAIRS else
            N_("{n} scored pairs where the test split has 1,379: not the same data"))
    return CheckRow("sts", Group.BENCHMARK, bundle.name, STS_WHAT,
                    _number(float(STS_SPEARMAN.value)), STS_SPEARMAN.source, verdict,
                    ours=_number(value), tolerance=SPEARMAN_TOLERANCE, off_by=off_by,
                    difference=abs(value - float(STS_SPEARMAN.value)), note=note,
                    params=(("n", _count(agreement.n)),))


def published_checks(bundle: ModelBundle | None = None, sts: CheckRow | None = None,
                     load: Callable[[str], ModelBundle] = load_model) -> list[CheckRow]:
    """Every check, in the table's order. ``bundle``: the shipped all-MiniLM-L6-v2 (loaded when
    None). ``sts``: the STS row from ``sts_check`` (else the row that asks for the file).
    ``load``: how a model on this machine is loaded (the app passes its cached loader)."""
    bundle = bundle if bundle is not None else load(DEFAULT_MODEL)
    if bundle.name != DEFAULT_MODEL:
        raise ValueError(f"the published checks are of {DEFAULT_MODEL}, not {bundle.name}")
    return [*readme_cosines(bundle), *parameter_counts(bundle), *token_ids(bundle),
            fill_mask_check(load), sts if sts is not None else sts_needed()]


# --- a row in words (the page and the terminal) ------------------------------------------------

VERDICT_WORDS = {
    Verdict.HELD: N_("held"),
    Verdict.EXPLAINED: N_("explained"),
    Verdict.OFF: N_("off by {by}"),
    Verdict.NEEDS_MODEL: N_("needs {model}"),
    Verdict.NEEDS_FILE: N_("needs a file"),
}


def verdict_text(row: CheckRow, translate: Callable[[str], str] = str) -> str:
    """held / explained / off by +0.0123 / needs bert-base-uncased / needs a file."""
    by = translate(row.off_by) if row.off_by else ""
    return translate(VERDICT_WORDS[row.verdict]).format(by=by, model=row.model)


def tolerance_text(row: CheckRow, translate: Callable[[str], str] = str) -> str:
    return f"±{row.tolerance:g}" if row.tolerance else translate(N_("exact"))


if __name__ == "__main__":   # the command moved out of core: say where, never a silent exit 0
    import sys

    sys.exit("The checks' command is python3 -m serving.checks (core holds the checks only).")
