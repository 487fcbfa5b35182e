"""The generation strategy an I-WebGenBench run uses: a first pass (single call, or the C.4 block pipeline)
followed by C.3 self-repair, and the model roles it needs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from runner.turns.generation import GenerationStrategy, SinglePass
from runner.models.base import Model
from runner.suites.iwebgen.blocks import ROLES as BLOCK_ROLES
from runner.suites.iwebgen.blocks import BlockPipeline
from runner.suites.iwebgen.repair import SelfRepair

__all__ = ["PIPELINES", "Pipeline", "iwebgen_strategy", "pipeline_roles"]

Pipeline = Literal["single", "blocks"]
PIPELINES: tuple[str, ...] = ("single", "blocks")


def pipeline_roles(pipeline: Pipeline) -> tuple[str, ...]:
    """The model roles of the pipeline besides the generator (the suite's `required_roles`)."""
    return BLOCK_ROLES if pipeline == "blocks" else ()


def iwebgen_strategy(pipeline: Pipeline, *, repair_rounds: int | None, roles: Mapping[str, Model]) -> GenerationStrategy:
    """The first pass `pipeline`, then up to `repair_rounds` self-repair rounds by the generator (C.3: K = 5);
    `repair_rounds=None`: the first pass alone."""
    if pipeline not in PIPELINES:
        raise ValueError(f"suite.pipeline = {pipeline!r}: choose one of {', '.join(PIPELINES)}")
    first: GenerationStrategy
    if pipeline == "single":
        first = SinglePass()
    else:
        missing = [role for role in BLOCK_ROLES if role not in roles]
        if missing:
            raise ValueError(f"suite.pipeline=blocks needs the model role(s) {missing} in the run "
                             f"(compose them with +model@roles.<role>=<name>)")
        first = BlockPipeline(roles["splitter"], roles["merger"])
    return first if repair_rounds is None else SelfRepair(first, rounds=repair_rounds)
