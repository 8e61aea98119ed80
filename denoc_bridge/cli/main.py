"""The ``denoc-bridge`` command line: ``main`` parses the arguments and runs one command
(one module each: :mod:`.info`, :mod:`.validate`, :mod:`.simulate`, :mod:`.bench`, :mod:`.sweep`,
:mod:`.docs`); a user mistake ends in one ``denoc-bridge: error: ...`` line and exit status 2, never a traceback."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from denoc_bridge.cli.bench import bench_command
from denoc_bridge.cli.common import EXIT_USAGE, option_words
from denoc_bridge.cli.compile import compile_command
from denoc_bridge.cli.docs import docs_command
from denoc_bridge.cli.info import info_command
from denoc_bridge.cli.parser import build_parser
from denoc_bridge.cli.simulate import simulate_command
from denoc_bridge.cli.sweep import sweep_command
from denoc_bridge.cli.validate import validate_command
from denoc_bridge.errors import DenocError, ResourceError
from denoc_bridge.multibody.data import get_num_threads


def _show_warning(message, category, filename, lineno, file=None, line=None):
    text = " ".join(str(message).split())
    print(f"denoc-bridge: warning: {text}", file=sys.stderr)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    np.set_printoptions(precision=4, suppress=True)
    command = {
        "info": info_command,
        "validate": validate_command,
        "simulate": simulate_command,
        "bench": bench_command,
        "sweep": sweep_command,
        "docs": docs_command,
        "compile": compile_command,
    }[args.command]
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning  # one line per warning, no source line
        try:
            get_num_threads()  # a bad DENOC_BRIDGE_NUM_THREADS is named now, not after the run
            return command(args)
        except BrokenPipeError:  # output piped into e.g. `head`
            sys.stdout = open(os.devnull, "w")
            return 0
        except (DenocError, OSError) as exc:
            text = " ".join(str(exc).split()) or type(exc).__name__
            if isinstance(exc, ResourceError):
                text = option_words(text)
            print(f"denoc-bridge: error: {text}", file=sys.stderr)
            return EXIT_USAGE
        except (KeyboardInterrupt, Exception) as exc:
            # a Ctrl-C, or another error raised while it was being handled (a library's cleanup
            # code interrupted); any other error is a bug's
            if not _from_interrupt(exc):
                raise
            print("denoc-bridge: interrupted", file=sys.stderr)
            return 130


def _from_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is a KeyboardInterrupt or was raised while one was being handled (its
    context or cause chain holds one)."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False


if __name__ == "__main__":
    sys.exit(main())
