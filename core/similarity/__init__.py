"""Cosine similarity, stage by stage: the Similarity page's core, grouped by subject.

    core.similarity.choices     which stages and token positions a view can compare
    core.similarity.anisotropy  corpus baselines, and cosines read raw / adjusted / standardised
    core.similarity.cosines     token x token cosines, words in context, one dimension's share
    core.similarity.sentences   sentence A against sentence B, three ways of pooling
"""
