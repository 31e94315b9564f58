"""Which layer knows what: linear probes at every layer, with their control tasks.

    probe.py       layer_probe, LayerProbe, ProbeTask (the probe, its folds and its control)
    builtin.py     the built-in sets: parts of speech (Universal Dependencies), word senses (the
                   Contexts page's corpus), tense; English and Chinese
    files.py       a person's own set: CoNLL-U, or a table of text and label
    tense_data.py  the tense sentences, written for this explorer

Importing this package loads scikit-learn and conllu, and changes nothing.
"""

from core.probes.builtin import TASK_OF, BuiltinSet, builtin_items
from core.probes.files import ConllSet, TableSet, read_conllu, read_labelled_table
from core.probes.probe import (
    LayerProbe,
    ProbeTask,
    check_items,
    expected_layer,
    layer_probe,
)

__all__ = ["TASK_OF", "BuiltinSet", "ConllSet", "LayerProbe", "ProbeTask", "TableSet",
           "builtin_items", "check_items", "expected_layer", "layer_probe", "read_conllu",
           "read_labelled_table"]
