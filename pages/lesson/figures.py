"""The words of the lessons: for each step its title, what to read in the output, and a question
whose answer is shown after the student's guess; the class's answers as a chart, and the lesson
as a handout. No Streamlit calls."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import plotly.graph_objects as go

from components.i18n import N_, _, language
from core.lessons import CellOutput
from pages.lesson.handout import Handout, HandoutStep, HandoutWords
from serving.classpoll import Tally

GOOD, OTHER = "#1b7a3d", "#7a8aa0"   # the right answer's bar, the others (4.5:1 on white)


class LiveFigure(StrEnum):
    """A figure a step reveals beside its cell's output, computed live by the page."""

    RANDOM_CKA = "random_cka"   # the loaded model against its random weights (linear CKA)


@dataclass(frozen=True)
class Step:
    title: str
    explanation: str
    question: str
    choices: tuple[str, ...]
    answer: int          # index into choices
    why: str
    needs_head: str | None = None   # "mlm" or "nsp": a pretraining head the step talks about
    live: LiveFigure | None = None  # a figure shown with the answer


EMBEDDING_STEPS = (
    Step(N_("Tokenize the sentence"),
         N_("The tokenizer returns three tensors of shape [1, T]: input_ids (each token's row in "
            "the vocabulary, with [CLS] = 101 first and [SEP] = 102 last), token_type_ids (all 0 "
            "for one sentence) and attention_mask (1 for every real token)."),
         N_("How many IDs does input_ids hold for a sentence of five words?"),
         (N_("5"), N_("7"), N_("10")), 1,
         N_("Five word pieces plus [CLS] and [SEP]: 7 (more when a word splits into ## pieces).")),
    Step(N_("The whole embedding layer at once"),
         N_("model.embeddings(...) runs the three lookups, adds them, and applies LayerNorm and "
            "dropout. The result has one row per token and hidden-size columns; grad_fn says the "
            "last operation was a LayerNorm."),
         N_("What is the shape of this output?"),
         (N_("[1, T, hidden size]"), N_("[T]"), N_("[vocabulary size, hidden size]")), 0,
         N_("One batch, one row per token, one column per hidden dimension.")),
    Step(N_("word_embeddings(input_ids)"),
         N_("Row input_id of the word table for each token. The values are small (mostly under "
            "0.1): the table was initialised with a small standard deviation and LayerNorm, "
            "not this table, brings them to a usable scale later."),
         N_("Are the rows of this output all different?"),
         (N_("Yes: different tokens, different rows"), N_("No: all rows are equal")), 0,
         N_("Each token looks up its own row; two rows are equal only for the same token.")),
    Step(N_("token_type_embeddings(token_type_ids)"),
         N_("Every token of one sentence has token_type_id 0, so every row is row 0 of the "
            "token-type table: all rows are equal. Type a sentence B in the sidebar and the rows "
            "of B become row 1."),
         N_("With one sentence, how many different rows does this output have?"),
         (N_("1"), N_("2"), N_("as many as tokens")), 0,
         N_("One: every token has segment 0, so every row is the same vector.")),
    Step(N_("position_embeddings(pos_ids)"),
         N_("pos_ids = torch.arange(T) numbers the tokens 0, 1, 2, …; each position looks up its "
            "own row of the position table. The model makes these IDs itself: the tokenizer "
            "does not return them. Note the shape has no batch dimension."),
         N_("What shape does pos_embeddings have?"),
         (N_("[1, T, hidden size]"), N_("[T, hidden size]"), N_("[T]")), 1,
         N_("torch.arange(T) has no batch dimension, so its lookup is [T, hidden size].")),
    Step(N_("The sum, and broadcasting"),
         N_("[1, T, h] + [1, T, h] + [T, h] works: PyTorch lines up the last dimensions and "
            "repeats the position rows for every sentence in the batch. The sum keeps the shape "
            "[1, T, h]."),
         N_("What shape does the sum have?"),
         (N_("[1, T, hidden size]"), N_("[T, hidden size]"), N_("an error")), 0,
         N_("Broadcasting adds the [T, h] position rows to every batch entry.")),
    Step(N_("LayerNorm and dropout"),
         N_("LayerNorm subtracts each token's mean, divides by its standard deviation and "
            "applies the learned γ and β. Dropout does nothing here: from_pretrained returns "
            "the model in eval mode, where dropout is the identity."),
         N_("In eval mode, what does dropout change?"),
         (N_("Nothing"), N_("10% of the values become 0"), N_("It rescales every value")), 0,
         N_("Dropout is only active in training mode (model.train()).")),
    Step(N_("The check: torch.allclose"),
         N_("The hand-made pipeline (three lookups, sum, LayerNorm, dropout) equals "
            "model.embeddings(...) for this input: the embedding layer is nothing more than "
            "these steps."),
         N_("What does torch.allclose print?"),
         (N_("True"), N_("False")), 0,
         N_("True: both ways compute the same numbers.")),
)

PARAMETER_STEPS = (
    Step(N_("Count every parameter"),
         N_("sum(p.numel()) over model.parameters() is the exact count of the loaded model."),
         N_("Which part of a small BERT holds the most parameters?"),
         (N_("The word embeddings"), N_("The pooler"), N_("The LayerNorms")), 0,
         N_("vocabulary × hidden size: 30,522 × 384 is over half of all-MiniLM-L6-v2.")),
    Step(N_("The tutorial's hand formula"),
         N_("The tutorial counts the three tables, four H×H attention matrices and two H×I "
            "feed-forward matrices per layer, and the H×H pooler: weights only."),
         N_("Is the hand formula larger or smaller than the exact count?"),
         (N_("Smaller"), N_("Larger"), N_("Equal")), 0,
         N_("Smaller: it leaves out every bias and every LayerNorm.")),
    Step(N_("What the formula leaves out"),
         N_("The output is the loaded model's own difference: its biases (one per output of "
            "every dense layer) and LayerNorm weights. The tutorial's model, bert-base-chinese, "
            "is larger, and its difference is 102,267,648 − 102,145,536 = 122,112."),
         N_("How big is the difference for bert-base-chinese?"),
         (N_("122,112"), N_("0"), N_("about 10 million")), 0,
         N_("122,112: biases and LayerNorm parameters, about 0.1% of the model.")),
    Step(N_("Where the difference goes"),
         N_("Summing the biases and the LayerNorm scales of the loaded model gives exactly the "
            "difference: every parameter is accounted for."),
         N_("What does the last line print?"),
         (N_("True"), N_("False")), 0,
         N_("True: biases + LayerNorm weights are the whole gap.")),
)

PRETRAINING_STEPS = (
    Step(N_("Masked LM: which tokens can be picked"),
         N_("A language model predicts a word from the words before it (n-grams, RNNs; ELMo runs "
            "one model each way). BERT's masked LM hides some tokens and predicts them from both "
            "sides at once. It never hides the special tokens: [CLS] at the start and [SEP] at "
            "the end."),
         N_("Which tokens can never be picked for masking?"),
         (N_("[CLS] and [SEP]"), N_("The first word"), N_("None: every token can be")), 0,
         N_("The special tokens are left out; every other token has the same chance.")),
    Step(N_("Pick 15% of the tokens"),
         N_("special is True for [CLS] and [SEP]; every other token is picked with probability "
            "0.15 (torch.bernoulli). A picked token's label is its own id; every other label is "
            "-100. A short sentence often has no token or one token picked: 15% is an average "
            "over many sentences."),
         N_("What label does a token that was not picked get?"),
         (N_("-100"), N_("0"), N_("Its own id")), 0,
         N_("-100 is the label PyTorch's cross-entropy skips: the loss counts only picked "
            "tokens.")),
    Step(N_("80% [MASK], 10% random, 10% kept"),
         N_("Of the picked tokens, 80% become [MASK], 10% a random token of the vocabulary and "
            "10% stay as they are; all of them keep their label. Predicting them needs the "
            "masked-language-model head on top of the encoder."),
         N_("Of the picked tokens, what share keeps its own token?"),
         (N_("10%"), N_("80%"), N_("None")), 0,
         N_("10% are kept and must still be predicted: the model cannot trust any token to be "
            "the original, and fine-tuning text, which has no [MASK], looks less unfamiliar."),
         needs_head="mlm"),
    Step(N_("The shares over 100,000 tokens"),
         N_("The same three draws over many tokens: about 0.15 of them are picked, and of those "
            "about 0.8 become [MASK], 0.1 random and 0.1 kept. These are shares of the picked "
            "tokens, so [MASK] replaces about 12% of all tokens."),
         N_("Over many tokens, what share of all tokens becomes [MASK]?"),
         (N_("About 12% (80% of 15%)"), N_("15%"), N_("80%")), 0,
         N_("0.8 × 0.15 = 0.12 of all tokens; 15% is the share picked.")),
    Step(N_("Whole-word masking"),
         N_("Google's whole-word-masking BERT (2019) and the Chinese BERT-wwm family (Cui et "
            "al. 2019) pick words, not tokens: when a word is picked, all of its tokens are "
            "masked together. Chinese BERT reads one character a token, so the words come "
            "from a word segmenter: 我爱北京天安门 is 我 / 爱 / 北京 / 天安门."),
         N_("With whole-word masking, how many tokens of 天安门 are masked together?"),
         (N_("1"), N_("2"), N_("3")), 2,
         N_("3: 天安门 is one word of three characters, one token each, so all three are "
            "picked together or not at all; the model cannot guess 门 from 天安 beside it.")),
    Step(N_("A sentence pair for next-sentence prediction"),
         N_("Next-sentence prediction reads two sentences: [CLS] A [SEP] B [SEP]. Sentence B's "
            "tokens, its [SEP] included, have token_type_id 1. In pretraining, half of the B "
            "sentences are the real next sentence and half a random one."),
         N_("Which token_type_id does the last [SEP] get?"),
         (N_("1"), N_("0")), 0,
         N_("The last [SEP] closes sentence B, so it belongs to segment 1.")),
    Step(N_("What the next-sentence head reads"),
         N_("The next-sentence head is one linear layer from the pooled [CLS] vector to two "
            "scores: B follows A, or not. The layer made here is new and untrained; it shows "
            "the shapes. The model's own head is trained together with the masked LM, their two "
            "losses added."),
         N_("How many outputs does the next-sentence head have?"),
         (N_("2: is next, is not next"), N_("1"), N_("One per token")), 0,
         N_("Two classes, read from [CLS] through the pooler."),
         needs_head="nsp"),
    Step(N_("The four fine-tuning patterns"),
         N_("Fine-tuning adds one new linear layer and trains it with the whole model: a class "
            "for a sentence or a pair from the pooled [CLS] vector, a class for every token, or "
            "a start and an end score for every token to pick an answer span. The layers made "
            "here are untrained: only their shapes are meaningful."),
         N_("Which patterns read every token's vector instead of [CLS]?"),
         (N_("A class per token, and answer spans"), N_("Only sentence classes"),
          N_("All four")), 0,
         N_("Token classes and spans need one output per token; the other two need one per "
            "input.")),
    Step(N_("A lookup is one-hot times the table"),
         N_("Each token becomes a one-hot row as long as the vocabulary; multiplied by the word "
            "table it picks out that token's row. nn.Embedding gives the same numbers without "
            "building the large one-hot matrix."),
         N_("What does torch.allclose print?"),
         (N_("True"), N_("False")), 0,
         N_("True: the lookup and the product are the same numbers.")),
    Step(N_("Sinusoidal and learned positions"),
         N_("The Transformer computes its position table from a formula: sines and cosines whose "
            "wavelength grows along the columns, so row 0 is 0, 1, 0, 1, …. BERT learns its "
            "table instead: it is a parameter of the model (hence the grad_fn), one row per "
            "position up to the model's limit."),
         N_("Which of the two tables was trained with the model?"),
         (N_("The learned one"), N_("The sinusoidal one"), N_("Both")), 0,
         N_("The sinusoid has no parameters; the learned table is updated by backpropagation.")),
    Step(N_("Segment embeddings"),
         N_("The token-type table has one row per segment: row 0 for sentence A, row 1 for "
            "sentence B. Its lookup adds the same vector to every token of a sentence."),
         N_("Do [CLS] (sentence A) and the last [SEP] (sentence B) get the same token-type "
            "vector?"),
         (N_("No: rows 0 and 1 differ"), N_("Yes")), 0,
         N_("They read different rows of the table, so torch.equal prints False.")),
    Step(N_("Where the two senses of “bank” come apart"),
         N_("Three sentences use bank beside a river, three at a money bank. Each bank's vector "
            "is read at every layer (hidden_states: 0 is the embedding output) and averaged per "
            "sense; the output is the cosine of the two averages at each layer, where 1 would "
            "mean the model cannot tell the senses apart. The Contexts page's Senses by layer "
            "tab measures the same over more sentences and thirty words."),
         N_("At which layer do the two senses of “bank” come apart?"),
         (N_("Already at layer 0, the lookup"), N_("In the encoder layers, after the lookup"),
          N_("Never: bank keeps one vector")), 1,
         N_("At layer 0 every bank reads the same row of the word table (only the positions "
            "differ), so the cosine is close to 1; each encoder layer mixes in the neighbouring "
            "words, and the cosine falls below its layer-0 value.")),
    Step(N_("Where the answer to [MASK] forms"),
         N_("hidden_states holds the [MASK] token's vector after the embeddings (layer 0) and "
            "after every encoder layer, one row each; the first number printed is where [MASK] "
            "stands. The masked-language-model head (cls.predictions: a dense layer, GELU and "
            "LayerNorm, then the decoder that shares the word table) was trained on the last "
            "row only. Applied to every row, it shows what the model would fill in at each "
            "depth: the Pretraining page's [MASK] by layer tab does this for any sentence."),
         N_("With bert-base-uncased, where does the final answer for [MASK] first become the "
            "head's top guess?"),
         (N_("Only at the last layer"), N_("Often several layers before the last"),
          N_("Already at layer 0, the lookup")), 1,
         N_("Din et al. (2023) applied bert-base-uncased's own head to every layer: the final "
            "answer is often on top well before the last layer. Not at layer 0: there the [MASK] "
            "vector depends only on its position, not on the words around it. And the decoder "
            "alone, without the head's transform, gives noise at every layer."),
         needs_head="mlm"),
    Step(N_("What fine-tuning changes, layer by layer"),
         N_("Fine-tuning trains a new linear layer from scratch together with every weight of "
            "the model; frozen features (ELMo's way) train the new layer alone: the output "
            "counts both. Now train pattern 1, a sentence to a class, on the built-in set for "
            "about 30 seconds: [open the Fine-tuning page with these settings]"
            "(/finetune?ft_task=sentence_class&ft_data=en&ft_epochs=3) and press Start. Every "
            "student who opens the same link watches the same run."),
         N_("Which layers does fine-tuning change most?"),
         (N_("The lowest layers, near the embeddings"), N_("The top layers, near the new layer"),
          N_("Every layer about as much")), 1,
         N_("Mostly the top layers (Merchant et al. 2020): in the map of the tuned model "
            "against the model before it, the diagonal stays near 1 at the bottom and falls "
            "towards the top. [See it for the run you trained]"
            "(/finetune?ft_task=sentence_class&ft_data=en&ft_epochs=3&ft_section=What+changed)"
            ".")),
    Step(N_("Which layer knows parts of speech best?"),
         N_("A probe is a simple classifier trained on the vectors of one layer at a time: "
            "above, one row of numbers per token at every layer. If it reads a word's part of "
            "speech well from a layer's rows, on sentences it was not trained on, that layer "
            "holds it. The Probes page trains one at every layer on 400 sentences of a "
            "treebank, beside a control task of random labels: [open it with parts of speech]"
            "(/probes?prb_set=parts+of+speech)."),
         N_("Which layer knows parts of speech best?"),
         (N_("The embedding output (layer 0)"), N_("A middle layer"), N_("The last layer")), 1,
         N_("A middle layer: the embedding output already knows much from the word alone, the "
            "layers above add what the context says (is \"run\" a noun or a verb here?), and "
            "the last layers turn towards the model's own training goal. Tenney et al. 2019 "
            "found part of speech among the first things BERT resolves, low in the stack.")),
    Step(N_("What pretraining changed: the model against random weights"),
         N_("Linear CKA compares two sets of vectors for the same tokens: 1 when one set is the "
            "other rotated or scaled, as the output above checks on your sentence, and near 0 "
            "when they share no structure. With the answer, the page compares the loaded model "
            "with the same architecture before any training (its weights as BertModel(config) "
            "makes them) over the few thousand tokens of the built-in corpus: on fewer tokens "
            "than the model has dimensions, CKA reads high whatever the vectors."),
         N_("How alike are the trained model and the same model with random weights, at the "
            "embedding output and at the last layer?"),
         (N_("About as alike at both: they share the architecture"),
          N_("More alike at the embedding output than at the last layer"),
          N_("More alike at the last layer than at the embedding output")), 1,
         N_("The random model's embedding output is a LayerNorm of random lookups, yet the same "
            "token still gets the same vector and every sentence the same position rows, so "
            "part of the trained model's structure is there already. At the last layer, what is "
            "still alike is what the architecture gives without training; the rest is what "
            "pretraining changed."),
         live=LiveFigure.RANDOM_CKA),
)

LESSONS = {"embedding": (N_("The embedding layer"), EMBEDDING_STEPS),
           "parameters": (N_("Counting parameters"), PARAMETER_STEPS),
           "pretraining": (N_("From language models to BERT"), PRETRAINING_STEPS)}


HEAD_NAMES = {"mlm": ("cls.predictions", N_("the masked-language-model head")),
              "nsp": ("cls.seq_relationship", N_("the next-sentence head"))}


def missing_head_note(step: Step, model: str, missing: frozenset[str]) -> str | None:
    """What a step about a pretraining head says when the loaded model has none."""
    if step.needs_head is None or step.needs_head not in missing:
        return None
    module, what = HEAD_NAMES[step.needs_head]
    return _("{model} has no {module} ({what}): it was saved without its pretraining heads, so "
             "this step shows what goes into the head, not what it predicts. A checkpoint of "
             "bert-base-uncased has both heads.").format(model=model, module=module, what=_(what))


def random_cka_figures(cka: np.ndarray) -> tuple[float, float]:
    """CKA of the embedding output with the embedding output, and of the last layer with the
    last layer: the first and last entries of the map's diagonal."""
    diagonal = np.diagonal(cka)
    return float(diagonal[0]), float(diagonal[-1])


def random_cka_words(last_layer: int) -> tuple[str, str, str]:
    """The two figures' labels, and the template of the line under them (its model name, rows
    and sentences filled as code by the page)."""
    return (_("Embedding output (layer 0)"),
            _("Last layer (layer {n})").format(n=last_layer),
            _("Linear CKA of {model} against the same model with random weights, over {rows} "
              "tokens of {texts} sentences of the built-in corpus. 1 would be the same vectors "
              "up to a rotation and a scale."))


def handout_words() -> HandoutWords:
    return HandoutWords(
        lang="zh-Hans" if language() == "zh" else "en",
        model_label=_("Model"), sentence_label=_("Sentence"), class_label=_("Class"),
        code_label=_("Code"), output_label=_("Output"), question_label=_("Question"),
        answer_label=_("Answer: {answer}."),
        class_answers=_("The class's answers ({count} answered)"),
    )


def lesson_handout(lesson: str, model: str, sentence: str, outputs: list[CellOutput],
                   missing_heads: frozenset[str] = frozenset(),
                   tallies: list[Tally | None] | None = None,
                   class_code: str | None = None) -> Handout:
    """The whole lesson, every step with its code, output, question and answer, as a handout
    in the language of this run; with the class's answers (per step, where given) when there
    was a class."""
    title, steps = LESSONS[lesson]
    parts = []
    for i, (step, cell) in enumerate(zip(steps, outputs, strict=True)):
        tally = tallies[i] if tallies else None
        parts.append(HandoutStep(
            title=_(step.title), code=cell.code, output=cell.text,
            explanation=_(step.explanation), question=_(step.question),
            choices=tuple(_(c) for c in step.choices), answer=step.answer, why=_(step.why),
            counts=tally.counts if tally is not None else None,
            note=missing_head_note(step, model, missing_heads)))
    return Handout(title=_(title), model=model, sentence=sentence, steps=tuple(parts),
                   words=handout_words(), class_code=class_code)


def answers_chart(step: Step, tally: Tally) -> go.Figure:
    """The class's answers as horizontal bars, the right answer's bar green."""
    labels = [_(c) for c in step.choices]
    colours = [GOOD if i == step.answer else OTHER for i in range(len(labels))]
    fig = go.Figure(go.Bar(x=list(tally.counts), y=labels, orientation="h",
                           marker_color=colours, text=list(tally.counts),
                           textposition="outside", cliponaxis=False, textfont={"size": 16},
                           hovertemplate="%{y}: %{x}<extra></extra>"))
    fig.update_layout(height=80 + 48 * len(labels), margin={"l": 10, "r": 40, "t": 10, "b": 30},
                      font={"size": 16},
                      # Choices such as "-100" or "0" are labels, not numbers. Each axis's own
                      # font: Streamlit's chart theme sets its ticks smaller than the layout's
                      # font (11 px as drawn), too small for the back of a classroom.
                      yaxis={"autorange": "reversed", "type": "category",
                             "tickfont": {"size": 16}},
                      xaxis={"title": {"text": _("students"), "font": {"size": 16}},
                             "tickfont": {"size": 14}, "rangemode": "tozero",
                             "dtick": 1 if max(tally.counts, default=0) < 10 else None})
    return fig
