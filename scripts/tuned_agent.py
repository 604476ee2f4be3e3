"""The agent with tunables overridden from the environment, for measuring a change
on the public set and the panels before it goes into `starter/config.py`:

    TUNE_prior_alpha=0.25 python -m evaluator.local_evaluator --agent scripts.tuned_agent:TunedAgent \\
        --dataset data/panels/uniform.jsonl --workers 2

Every `TUNE_<field>` names a field of `starter.config.Tunables`; an unknown
`TUNE_` variable is an error, so a typo never measures the default by mistake.
"""
from __future__ import annotations

import dataclasses
import os

from starter.agent import Agent
from starter.config import Tunables


def tunables_from_env(env: dict[str, str] | None = None) -> Tunables:
    env = dict(os.environ if env is None else env)
    fields = {f.name: f for f in dataclasses.fields(Tunables)}
    overrides = {}
    for key, raw in env.items():
        if not key.startswith("TUNE_"):
            continue
        name = key[len("TUNE_"):]
        if name not in fields:
            raise ValueError(f"{key}: Tunables has no field {name!r}")
        overrides[name] = type(fields[name].default)(raw)
    return Tunables(**overrides)


class TunedAgent(Agent):
    def __init__(self, catalog_path: str | None = None) -> None:
        super().__init__(catalog_path, tunables_from_env())
