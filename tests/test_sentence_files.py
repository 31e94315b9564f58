"""core.sentence_files.reader: every cell of a file reaches the model as written, and every bad
file gets a refusal or a skipped line with its reason, never a changed sentence.

The benchmark-like file is written here: seven tab-separated columns as a public sentence-
similarity benchmark's test split is distributed (genre, source file, year, id, score,
sentence 1, sentence 2), no header, sentences with quotes at the start, inside, unbalanced.
"""

from __future__ import annotations

import codecs
import io
import json
import random

import pandas as pd
import pytest

from core.sentence_files.reader import (
    MAX_BYTES,
    MAX_ROWS,
    Format,
    Quoting,
    Reason,
    Refusal,
    read_table,
    read_upload,
)
from core.similarity.pair_lists import (
    label_scores,
    pairs_from,
    propose_columns,
    read_file,
    read_text,
    score_agreement,
)

QUOTED = [
    '"The cat," she said, "sat on the mat."',
    '"Unbalanced quote at the start of a sentence.',
    'A sentence with a "quote" inside it.',
    'Ends with a quote"',
    '""Two quotes"" then text',
    '"Wholly quoted."',
    "It's an apostrophe, and a comma; and a semicolon.",
    "Tabs' neighbours: commas, \"quotes\", 'single quotes'",
    "三个汉字 and “curly quotes” «guillemets»",
    "=SUM(A1) looks like a formula",
    "a\u2028line separator and a \x0cform feed stay",
]
GENRES = ["main-captions", "main-news", "main-forums"]


def benchmark_rows(n: int = 300) -> list[list[str]]:
    rng = random.Random(7)
    words = "a man woman dog plays runs the guitar on in park quickly slowly red".split()
    rows = []
    for i in range(n):
        s1 = QUOTED[i % len(QUOTED)] if i % 3 == 0 else " ".join(rng.choices(words, k=8)) + "."
        s2 = QUOTED[(i * 5 + 1) % len(QUOTED)] if i % 4 == 0 else " ".join(
            rng.choices(words, k=6)) + "."
        rows.append([GENRES[i % 3], "MSRvid" if i % 2 else "headlines", f"{2012 + i % 5}test",
                     f"{i:04d}", f"{rng.uniform(0, 5):.3f}", s1, s2])
    return rows


def benchmark_bytes(rows: list[list[str]]) -> bytes:
    return ("\n".join("\t".join(r) for r in rows) + "\n").encode("utf-8")


def test_the_benchmark_file_as_distributed_round_trips():
    rows = benchmark_rows()
    table = read_table(benchmark_bytes(rows), "sts-test.csv")
    assert table.refused is None and table.delimiter == "\t" and table.quoting == Quoting.NONE
    assert table.header_line is None and table.width == 7 and not table.skipped
    assert [list(r.cells) for r in table.rows] == rows       # every cell, byte for byte
    assert [r.line for r in table.rows] == list(range(1, len(rows) + 1))
    proposal = propose_columns(table)
    assert (proposal.a, proposal.b, proposal.score, proposal.how) == (5, 6, 4, "content")
    pairs = pairs_from(table, proposal.a, proposal.b, proposal.score)
    assert len(pairs.pairs) == len(rows) and not pairs.skipped
    for (a, b), score, row in zip(pairs.pairs, pairs.scores, rows, strict=True):
        assert a.encode() == row[5].encode() and b.encode() == row[6].encode()
        assert score == float(row[4])
    # Pasted as text, the same pairs.
    pasted = read_text(benchmark_bytes(rows).decode())
    assert pasted.pairs == pairs.pairs and pasted.scores == pairs.scores


def test_a_header_names_the_columns_in_any_order():
    rows = benchmark_rows(40)
    header = ["genre", "filename", "year", "id", "score", "sentence1", "sentence2"]
    order = [6, 4, 0, 5, 1, 2, 3]            # sentence2, score, genre, sentence1, ...
    text = "\n".join("\t".join(r[k] for k in order) for r in [header, *rows])
    table = read_table(text.encode(), "x.tsv")
    assert table.header_line == 1 and table.columns[0] == "sentence2"
    proposal = propose_columns(table)
    assert (proposal.a, proposal.b, proposal.score, proposal.how) == (3, 0, 1, "names")
    pairs = pairs_from(table, proposal.a, proposal.b, proposal.score)
    assert pairs.pairs == tuple((r[5], r[6]) for r in rows)
    assert [s.reason for s in pairs.skipped] == [Reason.HEADER]
    zh = read_table("句子1\t句子2\t分数\t来源\n我爱你\t我喜欢你\t4.5\tx\n你好\t再见\t1\ty\n")
    p = propose_columns(zh)
    assert (p.a, p.b, p.score) == (0, 1, 2)
    assert pairs_from(zh, p.a, p.b, p.score).pairs == (("我爱你", "我喜欢你"), ("你好", "再见"))
    labels = read_table("text_a,text_b,label\nI like it,I love it,1\nI like it,It rains,0\n")
    assert propose_columns(labels).score == 2


def test_csv_quoting_in_a_tab_file_only_when_the_file_says_so():
    # Written by a CSV writer with a tab delimiter: a doubled quote inside a quoted field.
    frame = pd.DataFrame({"sentence1": ['She said "hi".', "plain"],
                          "sentence2": ["x", '"Yes."'], "score": [1.0, 2.0]})
    data = frame.to_csv(sep="\t", index=False).encode()
    table = read_table(data, "f.tsv")
    assert table.quoting == Quoting.CSV
    assert pairs_from(table, 0, 1, 2).pairs == (('She said "hi".', "x"), ("plain", '"Yes."'))
    # No doubled quote anywhere: the quotes are the text's own.
    table = read_table(b'"Yes."\tNo.\t1\n"Well"\tok\t2\n')
    assert table.quoting == Quoting.NONE and table.rows[0].cells[0] == '"Yes."'


def test_comma_files_unbalanced_quotes_are_skipped_not_merged():
    text = 'a,b,1\n"never closed,b,2\nc,d,3\n"x, y","z ""q""",4\n'
    parsed = read_text(text)
    assert parsed.lines == (1, 3, 4)
    assert parsed.pairs[-1] == ("x, y", 'z "q"')
    assert [(s.line, s.reason) for s in parsed.skipped] == [(2, Reason.UNREADABLE)]


def test_json_lines_and_parquet(tmp_path):
    records = [{"sentence1": QUOTED[i % len(QUOTED)], "sentence2": f"  pair {i}  ",
                "label": i % 2, "idx": i} for i in range(20)]
    lines = "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\nnot json\n[1]\n"
    table = read_table(lines.encode(), "train.jsonl")
    assert table.format == Format.JSONL and table.columns == ("sentence1", "sentence2", "label",
                                                              "idx")
    assert [(s.line, s.reason) for s in table.skipped] == [(21, Reason.JSON), (22, Reason.JSON)]
    p = propose_columns(table)
    pairs = pairs_from(table, p.a, p.b, p.score)
    assert pairs.pairs[0] == (QUOTED[0], "pair 0") and pairs.scores[:2] == (0.0, 1.0)
    buffer = io.BytesIO()
    pd.DataFrame(records).to_parquet(buffer)
    table = read_table(buffer.getvalue(), "train-00000.parquet")
    assert table.format == Format.PARQUET and table.rows[3].cells[0] == QUOTED[3]
    assert pairs_from(table, 0, 1, 2).pairs == pairs.pairs


def test_bad_files_are_refused_with_their_reason(tmp_path):
    # A wrong encoding: a Chinese file saved as GB18030 is read as that, and says so.
    gbk = "我爱你\t我喜欢你\t4\n你好\t再见\t1\n".encode("gb18030")
    table = read_table(gbk, "zh.tsv")
    assert table.charset == "gb18030" and table.rows[0].cells[:2] == ("我爱你", "我喜欢你")
    latin = read_table("café\tcrème\t3\n".encode("latin-1"))
    assert latin.charset == "latin-1" and latin.rows[0].cells[0] == "café"
    # A header only.
    assert read_table("sentence1\tsentence2\tscore\n").refused == Refusal.HEADER_ONLY
    # Text where scores were expected: the pairs come without scores, and that is said.
    text = "sentence1,sentence2,score\na,b,high\nc,d,low\ne,f,3\n"
    parsed = read_text(text)
    assert parsed.score_text and len(parsed.pairs) == 3 and not parsed.has_scores
    # 30 columns: read, and the sentence columns proposed by content.
    rows = [[f"{i}"] * 10 + [f"sentence number {i} is long enough"] + [str(i % 2)] * 9
            + [f"another sentence {i} here"] + ["x"] * 9 for i in range(30)]
    table = read_table("\n".join(",".join(r) for r in rows).encode())
    assert table.width == 30 and not table.skipped
    p = propose_columns(table)
    assert (p.a, p.b) == (10, 20)
    # 200 MB: refused from its size alone, before a byte is read.
    class Huge(io.RawIOBase):
        size = 200_000_000
        name = "big.csv"

        def read(self, *args):
            raise AssertionError("read")

    assert read_upload(Huge()).refused == Refusal.TOO_LARGE
    big = tmp_path / "big.csv"
    with open(big, "wb") as f:
        f.truncate(200_000_000)            # a sparse file: no 200 MB written
    with open(big, "rb") as f:
        assert read_upload(f).refused == Refusal.TOO_LARGE and f.tell() == 0
    assert read_table(b"a,b\n" * (MAX_BYTES // 4 + 1)).refused == Refusal.TOO_LARGE
    # Parquet that is not Parquet, and a broken one.
    assert read_table(b"a,b\n", "x.parquet").refused == Refusal.NOT_PARQUET
    assert read_table(b"PAR1 broken PAR1", "x.parquet").refused == Refusal.NOT_PARQUET
    # An Excel workbook renamed .csv (a zip with xl/ inside), and an old .xls.
    xlsx = b"PK\x03\x04" + b"\x00" * 26 + b"[Content_Types].xml" + b"\x00" * 100 + b"xl/"
    assert read_table(xlsx, "scores.csv").refused == Refusal.EXCEL
    assert read_table(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 200,
                      "s.csv").refused == Refusal.EXCEL
    assert read_table(b"\x89PNG\r\n\x1a\n\x00\x00" * 20).refused == Refusal.BINARY
    assert read_table("\n \n").refused == Refusal.NOTHING
    assert read_table(codecs.BOM_UTF16_LE + "a\tb\t1\n".encode("utf-16-le")).rows[0].cells == (
        "a", "b", "1")


def test_lines_beyond_the_limit_are_counted():
    table = read_table("\n".join(f"s{i}\tt{i}\t1" for i in range(MAX_ROWS + 5)))
    assert len(table.rows) == MAX_ROWS and table.beyond == 5
    assert table.beyond_from == MAX_ROWS + 1


def test_labels_get_auc_and_the_best_threshold():
    from sklearn.metrics import accuracy_score, roc_auc_score

    cosines = [0.9, 0.8, 0.75, 0.4, 0.3, 0.6, 0.2, 0.85]
    labels = [1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0]
    result = label_scores(cosines, labels)
    assert result.auc == pytest.approx(roc_auc_score(labels, cosines))
    best = max(accuracy_score(labels, [c >= t for c in cosines]) for t in cosines)
    assert result.accuracy == pytest.approx(best)
    assert accuracy_score(labels, [c >= result.threshold for c in cosines]) == pytest.approx(best)
    assert result.majority == 0.5 and (result.positives, result.negatives) == (4, 4)
    agreement = score_agreement(cosines, labels)
    assert agreement.labels == result and (agreement.low, agreement.high) == (0.0, 1.0)
    assert score_agreement(cosines, [c * 7 for c in cosines]).labels is None    # a 0-7 scale
    assert read_file(b"a,b,1\nc,d,0\ne,f,1\n").scores == (1.0, 0.0, 1.0)


# --- files as they ship: ragged lines ------------------------------------------------------------

# The STS benchmark's test file as it ships: 1,379 lines, 7 tab-separated fields on most, 9 on
# lines 626-879 and 1350-1379 (the last two name the source).
STS_LINES = 1379
STS_NINE = (range(626, 880), range(1350, 1380))


def sts_rows(n: int = STS_LINES) -> list[list[str]]:
    """The benchmark's shape: benchmark_rows' seven fields, two more on the lines of STS_NINE."""
    rows = benchmark_rows(n)
    for k, row in enumerate(rows, start=1):
        if any(k in r for r in STS_NINE):
            row += ["sts-source", f"file-{k % 9}.txt"]
    return rows


def test_a_file_shaped_as_the_sts_benchmark_reads_every_pair():
    rows = sts_rows()
    assert sum(len(r) == 9 for r in rows) == 284
    table = read_table(benchmark_bytes(rows), "sts-test.csv")
    assert table.width == 7 and table.delimiter == "\t" and not table.skipped
    assert [r.line for r in table.extra_rows] == [k for r in STS_NINE for k in r]
    assert {r.extra for r in table.extra_rows} == {2}
    p = propose_columns(table)
    assert (p.a, p.b, p.score) == (5, 6, 4)
    pairs = pairs_from(table, p.a, p.b, p.score)
    assert len(pairs.pairs) == STS_LINES and not pairs.skipped and len(pairs.extra) == 284
    for (a, b), score, row in zip(pairs.pairs, pairs.scores, rows, strict=True):
        assert (a, b) == (row[5], row[6]) and score == float(row[4])
    # The user's switch: those lines skipped, with their reason and the fields they had over.
    skipped = pairs_from(table, p.a, p.b, p.score, skip_extra=True)
    assert len(skipped.pairs) == STS_LINES - 284 and not skipped.extra
    assert {(s.reason, s.detail) for s in skipped.skipped} == {(Reason.EXTRA, "2")}
    # Pasted rather than uploaded: the same pairs.
    pasted = read_table(benchmark_bytes(rows).decode())
    assert pairs_from(pasted, 5, 6, 4).pairs == pairs.pairs


def test_ragged_middles_missing_fields_and_trailing_tabs():
    lines = [
        "genre\tscore\tsentence1\tsentence2",              # 1: a header
        "news\t4.0\tA man plays.\tSomeone plays.",         # 2
        "news\t3.5\tA tab\tinside A.\tB here.",            # 3: a tab in A, B shifted
        "news\t2.0\tOnly A, no B.",                        # 4: B missing
        "news\t1.0\t\"Quoted at the start\tand B.",         # 5: a quote at the start of A
        "news\t0.5\tTrailing tabs.\tB.\t\t",               # 6: empty fields after: not extra
        "news\t5",                                         # 7: no sentences
    ]
    table = read_table("\n".join(lines).encode(), "x.tsv")
    assert table.header_line == 1 and table.width == 4 and table.quoting == Quoting.NONE
    assert [(r.line, r.extra) for r in table.extra_rows] == [(3, 1)]
    pairs = pairs_from(table, 2, 3, 1)
    assert pairs.lines == (2, 3, 5, 6)
    assert pairs.pairs[1] == ("A tab", "inside A.")            # as the fields fall: the user's call
    assert pairs.pairs[2] == ('"Quoted at the start', "and B.")
    assert pairs.pairs[3] == ("Trailing tabs.", "B.")
    assert {s.line: (s.reason, s.detail) for s in pairs.skipped} == {
        1: (Reason.HEADER, ""), 4: (Reason.MISSING, "3"), 7: (Reason.MISSING, "2")}
    assert pairs_from(table, 2, 3, 1, skip_extra=True).lines == (2, 5, 6)


def test_comma_files_extra_fields_and_quoted_commas():
    text = ('sentence1,sentence2,score\n'
            '"Hello, world","She said ""hi"", then left",4.5\n'     # 2: quoted commas
            'A dog runs.,A dog is running.,4,source-b\n'            # 3: an extra field at the end
            'An unquoted, comma,B,3\n'                              # 4: the columns shifted
            '"never closed,b,2\n'                                   # 5: an open quote
            'x,y,1\n')
    table = read_table(text)
    pairs = pairs_from(table, 0, 1, 2)
    assert pairs.pairs == (("Hello, world", 'She said "hi", then left'),
                           ("A dog runs.", "A dog is running."), ("x", "y"))
    assert pairs.scores == (4.5, 4.0, 1.0) and pairs.lines == (2, 3, 6)
    assert pairs.extra == ((3, 1),)
    assert [(s.line, s.reason, s.detail) for s in pairs.skipped] == [
        (1, Reason.HEADER, ""), (4, Reason.SHIFTED, "1"),     # "B" is no score: shifted
        (5, Reason.UNREADABLE, "unexpected end of data")]


def deep_json(depth: int = 2000) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize("name", ["deep.jsonl", "deep.csv", "deep.tsv", None])
def test_json_too_deep_is_a_skipped_line_under_any_name(name):
    good = json.dumps({"sentence1": "A cat sleeps.", "sentence2": "A cat naps.", "score": 4})
    for text in (deep_json() + "\n" + good + "\n", good + "\n" + deep_json() + "\n"):
        table = read_table(text.encode(), name)
        assert table.format == Format.JSONL and table.refused is None, name
        deep = 1 if text.startswith("{\"a\"") else 2
        assert [(s.line, s.reason) for s in table.skipped] == [(deep, Reason.DEEP)]
        assert pairs_from(table, 0, 1, 2).pairs == (("A cat sleeps.", "A cat naps."),)
    alone = read_table(deep_json().encode(), name)
    assert alone.refused == Refusal.NOTHING and alone.skipped[0].reason == Reason.DEEP
    # Nested just under the parser's limit: read, its value written as JSON.
    value = read_table(('{"s1": "x", "s2": ' + deep_json(300) + "}").encode(), name)
    assert value.refused is None and value.rows[0].cells[1] == json.dumps(
        json.loads(deep_json(300)))


def test_too_long_lines_and_odd_files_never_raise():
    from core.sentence_files.reader import MAX_LINE_CHARS

    long = "x" * (MAX_LINE_CHARS + 1)
    for text in (f"a\tb\t1\n{long}\tc\t2\n", f'a,b,1\n"{long}",c,2\n',
                 '{"s": "a", "t": "b"}\n{"s": "' + long + '", "t": "c"}\n'):
        table = read_table(text)
        assert [(s.line, s.reason) for s in table.skipped] == [(2, Reason.LONG)], text[:20]
        assert len(table.rows) == 1
    rng = random.Random(3)
    pieces = ["\t", ",", ";", '"', "'", "{", "}", "[", "]", ":", "\n", "\r", "\\", "a", "句",
              " ", "\x0c", "1.5", "nan", "\u2028", "\ufeff", '""', '{"a":', "null"]
    for _ in range(300):
        text = "".join(rng.choices(pieces, k=rng.randint(1, 200)))
        for name in (None, "x.csv", "x.jsonl", "x.tsv"):
            table = read_table(text.encode(), name)
            if table.refused is None:
                p = propose_columns(table)
                for skip in (False, True):
                    pairs_from(table, p.a, p.b, p.score, skip_extra=skip)


def test_corpora_read_through_the_same_reader():
    from core.contexts.user_corpus import (
        label_column,
        sentence_column,
        table_of_file,
        table_of_text,
    )

    pasted = table_of_text('"Hi," she said; and left.\nA line, with commas.\n')
    assert pasted.width == 1 and pasted.header_line is None
    assert [r.cells for r in pasted.rows] == [('"Hi," she said; and left.',),
                                              ("A line, with commas.",)]
    labelled = table_of_file(b"The bank lends.\tmoney\nWe sat on the bank.\triver\n",
                             "senses.txt")
    s = sentence_column(labelled)
    assert (s, label_column(labelled, s)) == (0, 1)
    rows = sts_rows(40)
    sts = table_of_file(benchmark_bytes(rows), "sts.tsv")
    assert sentence_column(sts) in (5, 6) and len(sts.rows) == 40
    for name in ("deep.txt", "deep.csv", "deep.jsonl"):
        table = table_of_file(deep_json().encode(), name)
        assert table.refused == Refusal.NOTHING or not table.rows, name
    assert table_of_file(b"x" * (MAX_BYTES + 1), "big.txt").refused == Refusal.TOO_LARGE


def test_the_reader_reads_tables_and_the_pair_lists_say_what_a_pair_is():
    """The generic reader knows files (their header names included); which column is sentence
    A, B or the score, and how a row becomes a pair, is core.similarity.pair_lists'."""
    from core.sentence_files import reader
    from core.similarity import pair_lists

    for name in ("pairs_from", "propose_columns", "PairList", "Proposal", "A_NAMES"):
        assert not hasattr(reader, name) and hasattr(pair_lists, name)
    pair_names = (*pair_lists.A_NAMES, *pair_lists.B_NAMES, *pair_lists.SCORE_NAMES)
    assert {reader.column_key(n) for n in pair_names} <= reader.KNOWN_NAMES
