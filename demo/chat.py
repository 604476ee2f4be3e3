"""Play the shopper yourself: chat with the agent in the terminal.

    python -m demo.chat [--catalog PATH]

Type what you are looking for, e.g. "I'm looking for Active Pants Sweatpants,
but I'm still exploring.", then answer the agent's questions in your own
words.  Commands: /why (explain the last turn), /reset (new session),
/help, /quit.  Works with piped input too: `printf '...\\n/why\\n' | python -m demo.chat`.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

from contest.paths import add_no_cache_argument
from demo.render import Style, render_explain, render_products, use_color
from demo.session import DEFAULT_AGENT, ChatSession, ProductLookup, SessionError, build_agent
from evaluator.data import resolve_catalog

HELP = "commands: /why explain the last turn, /reset start again, /help, /quit"


def run(session: ChatSession, stdin: TextIO, stdout: TextIO, style: Style, interactive: bool) -> int:
    """The read-eval-print loop; returns the number of turns played."""
    played = 0

    def out(text: str = "") -> None:
        stdout.write(text + "\n")
        stdout.flush()

    out(style("Chat with the shopping agent. ", "bold") + HELP)
    while True:
        if interactive:
            stdout.write(style("you> ", "magenta", "bold"))
            stdout.flush()
        line = stdin.readline()
        if not line:
            break
        text = line.strip()
        if not text:
            continue
        if not interactive:
            out(style("you> ", "magenta", "bold") + text)
        cmd = text.lower()
        if cmd in ("/quit", "/exit", "/q"):
            break
        if cmd in ("/help", "/?"):
            out(HELP)
            continue
        if cmd == "/reset":
            session.reset()
            out(style("(new session)", "dim"))
            continue
        if cmd == "/why":
            if not session.history:
                out(style("nothing to explain yet: say what you are looking for first", "dim"))
            else:
                view = session.history[-1]
                out(style(f"why turn {view.turn}:", "cyan", "bold"))
                out("\n".join(render_explain(view.explain, style)))
            continue
        if cmd.startswith("/"):
            out(f"unknown command {text!r}; {HELP}")
            continue
        try:
            view = session.send(text)
        except SessionError as exc:
            out(style(str(exc), "yellow"))
            continue
        played += 1
        out(style(f"agent (turn {view.turn})> ", "cyan", "bold") + view.agent)
        if view.explain.get("understood"):
            out(style("  understood: ", "dim") + " · ".join(view.explain["understood"]))
        out("\n".join(render_products(view.products, style)))
        if session.done:
            out(style(f"(that was turn {session.turn}, the benchmark's last; /reset to start again)", "dim"))
    return played


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m demo.chat", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--catalog", help="catalog JSONL (default: as the evaluator resolves it)")
    ap.add_argument("--agent", default=DEFAULT_AGENT, help="module:Class (default %(default)s)")
    ap.add_argument("--no-color", action="store_true", help="no ANSI colours (also off when stdout is not a tty)")
    add_no_cache_argument(ap)
    args = ap.parse_args(argv)
    try:
        catalog_path = resolve_catalog(args.catalog)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    print(f"loading {catalog_path} ...", file=sys.stderr)
    lookup = ProductLookup(catalog_path)
    agent = build_agent(catalog_path, args.agent)
    print(f"ready in {time.perf_counter() - t0:.1f} s ({len(lookup)} products)", file=sys.stderr)
    session = ChatSession(agent, lookup)
    interactive = sys.stdin.isatty()
    try:
        run(session, sys.stdin, sys.stdout, Style(use_color(sys.stdout, args.no_color)), interactive)
    except KeyboardInterrupt:
        print(file=sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
