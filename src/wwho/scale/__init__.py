"""Training on corpora larger than one machine's files: texts from iterators, counts from elsewhere,
counting on a Ray cluster.

BPE training is a map-reduce followed by a loop: counting the pieces grows with the corpus and
splits into shards; the merge loop runs on the *distinct* pieces only. This package feeds the
first half from other sources and runs it elsewhere; the trainers keep the second half
(:mod:`wwho.sgpe.phases`, :mod:`wwho.bytelevel.train`).

* :mod:`wwho.scale.texts`: an iterable of strings or of batches of strings (a ``datasets``
  column) as documents, with a progress bar;
* :mod:`wwho.scale.counts`: piece counts from a dict or a ``piece<TAB>count`` file, and writing them;
* :mod:`wwho.scale.shards`: a corpus cut into shards, and counting one shard (the local code);
* :mod:`wwho.scale.ray_counter`: shards counted in Ray tasks, partial counts reduced on the driver
  (joining a cluster bounded in time, ``WWHO_RAY_TIMEOUT``; Ray 2.9 or later).

Nothing here merges or knows syllables.
"""
