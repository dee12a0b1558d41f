"""Leaf package shared by every stage: the error tree and the one rule registry.

It imports nothing from the other ringfence packages, so `classifier`,
`profiles` and `compiler` can all depend on it without depending on each other.
"""
