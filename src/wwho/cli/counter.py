"""``--engine``, ``--address`` and ``--shard-bytes`` of ``wwho train`` (SGPE and byte-level): where
the corpus is counted. ``local`` (default): worker threads/processes of this machine; ``ray``:
Ray tasks (:mod:`wwho.scale.ray_counter`), on a new local Ray instance or the cluster at ``--address``.
The result is byte-identical either way. Also ``--balance`` (what is counted: several corpora sampled
with a temperature, :mod:`wwho.balance`). This module only declares and forwards the options."""

from __future__ import annotations

import argparse

from wwho.sizes import arg_type, check_range

SHARD_BYTES = arg_type(lambda v, w: check_range(v, w, 1, 2**50), "--shard-bytes", size=True)


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("counting on a cluster (pip install 'wwho[ray]')")
    g.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="count on this machine (local, default) or in Ray tasks (ray); same result")
    g.add_argument("--address", metavar="ADDR",
                   help="with --engine ray: a running Ray cluster (HOST:PORT, ray://HOST:10001 or auto); "
                        "default: RAY_ADDRESS where it is set, else a new local Ray instance with --workers "
                        "CPUs (not --balance, which counts locally)")
    g.add_argument("--shard-bytes", type=SHARD_BYTES, metavar="BYTES",
                   help="with --engine ray: bytes of plain text per task, k/M/G suffixes (default 32M)")


def engine_options(args: argparse.Namespace) -> dict:
    """The trainer's keyword options for the parsed arguments (none for the local engine)."""
    from wwho.errors import WwhoError

    if args.engine != "ray":
        if args.address is not None or args.shard_bytes:
            raise WwhoError("--address and --shard-bytes are options of --engine ray")
        return {}
    if getattr(args, "balance", None) is not None:
        raise WwhoError("--balance is an option of --engine local (Ray counts the corpora as they are)")
    if args.address is not None and not args.address.strip():
        # (an unset shell variable, --address "$RAY_HEAD"): not a quiet local run instead of the cluster
        raise WwhoError("--address is empty; give HOST:PORT, ray://HOST:PORT or auto, or leave it out "
                        "for a new local Ray instance")
    return {"engine": "ray", "address": args.address, "shard_bytes": args.shard_bytes}


def _alpha(value: str) -> float:
    try:
        alpha = float(value)
    except ValueError:
        alpha = -1.0
    if not 0 <= alpha <= 1:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, not {value!r}")
    return alpha


def check_balance(args: argparse.Namespace) -> None:
    """``--balance-seed`` only with ``--balance`` (it would be left unused without, in silence)."""
    from wwho.errors import WwhoError

    if args.balance is None and args.balance_seed != 0:
        raise WwhoError("--balance-seed is an option of --balance (the seed of its draws)")


def _seed(value: str) -> int:
    try:
        return int(value, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, not {value!r}") from None


def add_balance_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--balance", type=_alpha, default=None, metavar="ALPHA",
                   help="each corpus argument is one language (a file or a folder): sample them into one stream, "
                        "each with the share size**ALPHA of it (0.3 as mT5; 1: as given; 0: all alike), for one "
                        "tokenizer of many languages")
    p.add_argument("--balance-seed", type=_seed, default=0, metavar="N",
                   help="--balance: the seed of its draws (default 0; the same seed, the same stream)")
