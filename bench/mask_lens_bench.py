"""The [MASK] lens' speed: core.mask_lens against core.fill_mask, the Fill the mask view's work
that it extends, on the same checkpoint with an MLM head, in the same process.

Both run one forward pass with every hidden state; fill_mask applies the MLM head to the last
layer's [MASK] rows, mask_lens to the [MASK] rows of every layer (a layer more of the head's
vocabulary-wide product per layer: the lens' own cost). The two are interleaved (order rotated
each repetition) and the ratio is the median of the per-repetition ratios, as in
bench.core_bench.

No checkpoint with its heads ships with the app, and none is downloaded. Two are made, saved to
a temporary folder and loaded as the app loads a folder (core.load_model): the shipped
all-MiniLM-L6-v2's encoder (6 layers, hidden 384) with a random MLM head, and a random model of
bert-base-uncased's size (12 layers, hidden 768), the one a class would use. Both read the
shipped 30,522-token vocabulary; random weights cost what trained ones do. The head's product
with the whole vocabulary is a fixed cost per layer read, so the ratio is highest on the small
model and on short sentences, where the forward pass costs least.

    python3 -m bench.mask_lens_bench [--reps 15] [--threads 1]   # this part alone, as rows
    python3 -m bench.mask_lens_bench --threads 1 --parts           # and where the time goes

``--parts`` times the pieces of both, interleaved the same way: the forward pass with every
hidden state, the MLM head's transform (dense, GELU, LayerNorm) and its decoder (the product
with the whole vocabulary) on one row and on a row per layer, and the lens' own arithmetic on
the logits (log-softmax, top k, ranks). The floor is fill_mask's time plus what the head costs
on the other layers' rows: a lens that reads every layer's whole vocabulary cannot do less.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GOAL = 1.2       # mask_lens / fill_mask (issue 53)
K = 5            # the guesses per layer the page asks for (pages/pretraining/cache.LENS_K)
WARMUP = 3
TEXTS = {
    "the page's example": "The capital of France is [MASK].",
    "a longer sentence": (
        "The teacher explained how a transformer reads a sentence, and then the students "
        "guessed which [MASK] the model would put in the gap before the bell rang."),
}
# The checkpoint's files besides the weights: the shipped model's vocabulary and tokenizer.
TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json",
                   "special_tokens_map.json")


@dataclass(frozen=True)
class LensFigures:
    model: str
    what: str
    n_tokens: int
    fill_s: float    # median fill_mask
    lens_s: float    # median mask_lens
    ratio: float     # median of mask_lens / fill_mask, paired by repetition


MODELS = {"minilm": "all-MiniLM-L6-v2's encoder with an MLM head",
          "bert-base": "a random BERT of bert-base-uncased's size with its MLM head"}


def headed_checkpoint(folder: Path, model_kind: str = "minilm", seed: int = 0) -> Path:
    """A BertForMaskedLM saved in ``folder`` (model.safetensors) next to the shipped tokenizer's
    files: the shipped model's encoder with a random MLM head (``"minilm"``), or a random model
    of bert-base-uncased's size (``"bert-base"``)."""
    from transformers import BertConfig, BertForMaskedLM, BertModel

    from core.models import default_model_path

    source = default_model_path()
    torch.manual_seed(seed)
    if model_kind == "bert-base":
        model = BertForMaskedLM(BertConfig()).eval()   # BertConfig's defaults are BERT-base
    else:
        encoder = BertModel.from_pretrained(str(source), use_safetensors=True)
        model = BertForMaskedLM(encoder.config).eval()
        # The encoder's own weights (its pooler aside: a masked-LM checkpoint has none); the
        # decoder stays tied to the word table they fill.
        model.bert.load_state_dict(encoder.state_dict(), strict=False)
    model.save_pretrained(folder)
    for name in TOKENIZER_FILES:
        if (source / name).is_file():
            shutil.copy(source / name, folder / name)
    return folder


def bench_lens(bundle, model: str, what: str, text: str, reps: int) -> LensFigures:
    from bench.core_bench import alternating
    from core import encode, mask_lens
    from core.pretraining import fill_mask

    runs: dict[str, Callable[[], object]] = {
        "fill": lambda: fill_mask(bundle, text, top_k=K),
        "lens": lambda: mask_lens(bundle, text, k=K),
    }
    times = alternating(runs, reps, WARMUP)
    return LensFigures(
        model, what, len(encode(bundle, text).input_ids),
        statistics.median(times["fill"]), statistics.median(times["lens"]),
        statistics.median(t / f for t, f in zip(times["lens"], times["fill"], strict=True)))


@dataclass(frozen=True)
class LensParts:
    model: str
    what: str
    n_layers: int
    parts: dict[str, float]   # median seconds of each piece
    fill_s: float
    lens_s: float

    @property
    def floor_s(self) -> float:
        """fill_mask plus the head (transform and decoder) on the other layers' rows."""
        extra = (self.parts["transform, a row per layer"] - self.parts["transform, 1 row"]
                 + self.parts["decoder, a row per layer"] - self.parts["decoder, 1 row"])
        return self.fill_s + extra


def lens_parts(bundle, model: str, what: str, text: str, reps: int) -> LensParts:
    """Each piece of fill_mask and mask_lens timed alone, interleaved (bench.core_bench)."""
    import torch

    from bench.core_bench import alternating
    from core import encode, mask_lens
    from core.pretraining import fill_mask
    from core.pretraining.heads import hidden_states, mask_positions

    encoding = encode(bundle, text)
    positions = mask_positions(bundle, encoding, text)
    states = hidden_states(bundle, encoding)
    rows = torch.stack([h[0, positions] for h in states], dim=1)        # (masks, N+1, h)
    head = bundle.heads.predictions
    with torch.inference_mode():
        transformed = head.transform(rows)
        logits = head.decoder(transformed)

    def lens_arithmetic() -> object:
        with torch.inference_mode():
            log_probs = torch.log_softmax(logits, dim=-1)
            log_probs.topk(K, dim=-1)
            answer = log_probs[:, -1:].max(dim=-1, keepdim=True).values
            return (log_probs > answer).sum(dim=-1)

    def timed(fn, *args):
        def run() -> object:
            with torch.inference_mode():
                return fn(*args)
        return run

    runs: dict[str, Callable[[], object]] = {
        "fill_mask": lambda: fill_mask(bundle, text, top_k=K),
        "mask_lens": lambda: mask_lens(bundle, text, k=K),
        "forward, every hidden state": lambda: hidden_states(bundle, encoding),
        "transform, 1 row": timed(head.transform, rows[:, -1]),
        "transform, a row per layer": timed(head.transform, rows),
        "decoder, 1 row": timed(head.decoder, transformed[:, -1]),
        "decoder, a row per layer": timed(head.decoder, transformed),
        "lens arithmetic (log-softmax, top k, ranks)": lens_arithmetic,
    }
    times = alternating(runs, reps, WARMUP)
    medians = {name: statistics.median(t) for name, t in times.items()}
    return LensParts(model, what, int(rows.shape[1]) - 1, medians, medians.pop("fill_mask"),
                     medians.pop("mask_lens"))


def parts_report(reps: int) -> str:
    """Where fill_mask's and the lens' time goes, per checkpoint and text (markdown)."""
    from core import load_model

    lines = []
    for kind, model in MODELS.items():
        with tempfile.TemporaryDirectory() as tmp:
            bundle = load_model(str(headed_checkpoint(Path(tmp) / kind, kind)))
            for what, text in TEXTS.items():
                found = lens_parts(bundle, model, what, text, reps)
                lines.append(f"\n{model}, {what} ({found.n_layers + 1} hidden states):\n")
                lines.append("| piece | median |\n| --- | --- |")
                lines += [f"| {name} | {1000 * t:.2f} ms |" for name, t in found.parts.items()]
                lines.append(f"| fill_mask | {1000 * found.fill_s:.2f} ms |")
                lines.append(f"| mask_lens | {1000 * found.lens_s:.2f} ms |")
                lines.append(f"| floor: fill_mask + the head on the other layers' rows | "
                             f"{1000 * found.floor_s:.2f} ms ({found.floor_s / found.fill_s:.2f}x"
                             f" fill_mask; mask_lens {found.lens_s / found.fill_s:.2f}x, "
                             f"{found.lens_s / found.floor_s:.2f}x the floor) |")
    return "\n".join(lines)


def measure(reps: int) -> list[LensFigures]:
    from core import load_model

    figures = []
    for kind, model in MODELS.items():
        with tempfile.TemporaryDirectory() as tmp:
            bundle = load_model(str(headed_checkpoint(Path(tmp) / kind, kind)))
            figures += [bench_lens(bundle, model, what, text, reps)
                        for what, text in TEXTS.items()]
    return figures


def rows(figures: list[LensFigures]) -> list:
    from bench.report import Row, fmt_s

    return [Row("1 Core", f"mask_lens / fill_mask (the Fill the mask view's work), one [MASK] "
                f"in {f.what} ({f.n_tokens} tokens), {f.model}, top {K}",
                f"{f.ratio:.2f}x ({fmt_s(f.lens_s)} vs {fmt_s(f.fill_s)})", f"≤ {GOAL}x",
                f.ratio <= GOAL) for f in figures]


def core_rows(reps: int) -> list:
    """The part-1 rows (bench/run.py)."""
    from bench.app_bench import log

    log("core: mask_lens vs fill_mask on a checkpoint with an MLM head")
    return rows(measure(reps))


def main(argv: list[str] | None = None) -> int:
    """This part alone (the full bench runs it inside bench/run.py)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--threads", type=int, default=0,
                        help="torch threads (0: torch's default); one keeps the ratio steady on "
                             "a machine busy with other work")
    parser.add_argument("--parts", action="store_true",
                        help="also time the pieces of both and print the floor")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    from bench import machine
    from bench.report import markdown

    load = machine.load_average()
    table = markdown(core_rows(args.reps))
    parts = parts_report(args.reps) if args.parts else ""
    print(f"Load average (1/5/15 min): {load} at start, {machine.load_average()} at the end; "
          f"torch threads: {torch.get_num_threads()}\n\n{table}\n{parts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
