"""The agent with settings overridden from the environment, for measuring a change
on the public set and the panels before it goes into `starter/settings.py`:

    TUNE_prior_alpha=0.25 python -m evaluator.local_evaluator --agent scripts.tuned_agent:TunedAgent \\
        --dataset data/panels/uniform.jsonl --workers 2

Every `TUNE_<field>` names a field of one of `starter.settings`' component
settings; an unknown `TUNE_` variable is an error, so a typo never measures the
default by mistake.
"""
from __future__ import annotations

import os

from starter.agent import Agent
from starter.settings import Settings, settings_from_env


def tunables_from_env(env: dict[str, str] | None = None) -> Settings:
    return settings_from_env(dict(os.environ if env is None else env))


class TunedAgent(Agent):
    def __init__(self, catalog_path: str | None = None) -> None:
        super().__init__(catalog_path, tunables_from_env())
