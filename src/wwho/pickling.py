"""The class an unpickled (or copied) tokenizer comes back as.

wwho's tokenizers pickle as their data (a vocabulary, a model, a ``tokenizer.json``) and are rebuilt
by checked functions of their module, never from their attributes: the compiled core is no Python
object to pickle, and altered bytes must give a wwho error. A subclass's pickle names its class
too, and the rebuilt tokenizer is made an instance of it, as tiktoken's ``Encoding`` subclasses come
back as themselves. Like tiktoken's, such a pickle does not carry attributes the subclass set on
the instance; nor is the subclass's ``__init__`` run again.
"""

from __future__ import annotations

from typing import Any, TypeVar

from wwho.errors import VocabError

T = TypeVar("T")


def class_arg(obj: object, base: type) -> tuple[type, ...]:
    """The last argument of a pickle of ``obj``, its class: none for ``base`` itself (pickles of it
    stay as they were), ``(the subclass,)`` otherwise."""
    return () if type(obj) is base else (type(obj),)


def restored_as(obj: T, cls: Any, where: str) -> T:
    """``obj`` (rebuilt as its base class) as an instance of ``cls``, the class its pickle names
    (None: the base class). A class that is no subclass of the base is a :class:`VocabError`."""
    if cls is None or cls is type(obj):
        return obj
    if not (isinstance(cls, type) and issubclass(cls, type(obj))):
        raise VocabError(f"{where}: it names {cls!r}, which is no subclass of {type(obj).__name__}")
    try:
        obj.__class__ = cls
    except TypeError as exc:  # a subclass with __slots__ of its own: another layout
        raise VocabError(f"{where}: cannot be made a {cls.__name__} ({exc})") from None
    return obj
