"""Tables people bring (pair lists, corpora): read as they were distributed, nothing changed.

    core.tables.reader   read_table (CSV, TSV, JSON Lines, Parquet, pasted text) and pairs_from
"""

from core.tables.reader import PairList, Table, pairs_from, propose_columns, read_table

__all__ = ["PairList", "Table", "pairs_from", "propose_columns", "read_table"]
