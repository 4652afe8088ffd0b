"""Executable references: the pure-Python implementations that the compiled core replaced.

They are slow and literal on purpose, and used only by the tests, which compare them with the
core (``wwho._core``) on arbitrary text (hypothesis) and on the real corpora, beside the oracles
we did not write (spec 000's loop, ``regex`` ``\\X``, HF ``tokenizers``, tiktoken).
"""
