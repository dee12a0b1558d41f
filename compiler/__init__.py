"""Compiler and runner: profile + request -> sandbox spec -> backend argv -> execution.

`compile_profile` is pure; host facts are probed in `host.py` and passed in.
Only `backends/` spells bwrap flags.
"""
