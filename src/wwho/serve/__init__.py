"""``wwho serve``: a local page that shows how several tokenizers cut the same text.

:mod:`wwho.serve.view` computes what is shown (tokens laid over the input, cuts inside syllables and
grapheme clusters, where tokenizers disagree) without any web framework; :mod:`wwho.serve.app` is the
Starlette application (the optional extra ``wwho[serve]``) that serves it with the static page in
``static/``, of the tokenizers :mod:`wwho.serve.tokenizers` loads, with its request limits
(:mod:`wwho.serve.limits`, :mod:`wwho.serve.body`, :mod:`wwho.serve.worker`) and Host checks
(:mod:`wwho.serve.middleware`); :mod:`wwho.serve.connections` adds the connection limits uvicorn
lacks. Nothing here is imported by ``import wwho``.
"""
