"""Files of sentences people bring (pair lists, corpora): read as distributed, nothing changed.

    core.sentence_files.reader  read_table (CSV, TSV, JSON Lines, Parquet, pasted
                                text) and pairs_from
"""

from core.sentence_files.reader import PairList, Table, pairs_from, propose_columns, read_table

__all__ = ["PairList", "Table", "pairs_from", "propose_columns", "read_table"]
