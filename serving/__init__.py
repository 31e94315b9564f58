"""What serves rather than computes: background jobs (one executor), hub downloads and the
preparation command, the class-poll stores, the memory accountant, session clean-up.

Imports run one way: pages -> components -> serving -> core. Nothing here is imported by core.
"""
