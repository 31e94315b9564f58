"""The words of the lessons: for each step its title, what to read in the output, and a question
whose answer is shown after the student's guess. No Streamlit calls."""

from __future__ import annotations

from dataclasses import dataclass

from components.i18n import N_


@dataclass(frozen=True)
class Step:
    title: str
    explanation: str
    question: str
    choices: tuple[str, ...]
    answer: int          # index into choices
    why: str


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
         N_("The difference is the biases (one per output of every dense layer) and the "
            "LayerNorm weights: for bert-base-chinese, 102,267,648 − 102,145,536 = 122,112."),
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

LESSONS = {"embedding": (N_("The embedding layer"), EMBEDDING_STEPS),
           "parameters": (N_("Counting parameters"), PARAMETER_STEPS)}
