"""Cosine similarity, stage by stage: the Similarity page's core, grouped by subject.

    core.similarity.choices     which stages and token positions a view can compare
    core.similarity.anisotropy  corpus baselines, and cosines read raw / adjusted / standardised
    core.similarity.cosines     token x token cosines, words in context, one dimension's share
    core.similarity.sentences   sentence A against sentence B, three ways of pooling
    core.similarity.pairs       a pair's cosine split per token pair; many pairs at once
    core.similarity.pair_lists  lists of pairs as pasted or uploaded; the results as CSV
    core.similarity.pair_examples  built-in pairs, with scores written for this explorer
"""
