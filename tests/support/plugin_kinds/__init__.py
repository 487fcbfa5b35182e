"""A plugin that adds one kind to each family: a judge, an actor, a sandbox and a model provider, each in its own
module, registered where it is defined. A config loads it by listing the modules under `plugins`, and composes
its sections from conf/ here (`hydra.searchpath=[file://<this folder>/conf]`); nothing in runner/ names it."""
