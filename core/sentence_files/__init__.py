"""Files of sentences people bring (pair lists, corpora): read as distributed, nothing changed.

    core.sentence_files.reader  read_table (CSV, TSV, JSON Lines, Parquet, pasted
                                text): a table of cells, every line's number kept

What a table means is its reader's: pairs (core.similarity.pair_lists: propose_columns,
pairs_from), a corpus (core.contexts.user_corpus).
"""

from core.sentence_files.reader import Table, read_table

__all__ = ["Table", "read_table"]
