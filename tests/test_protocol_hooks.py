"""Callers use what a protocol declares: no module under runner/ probes a protocol implementation.

The project's seams are protocols with a base class of defaults (Judge/JudgeBase, Model/ModelBase,
Suite/SuiteBase, Rubric/RubricBase, Actor, Sandbox, GenerationStrategy, BrowserPool): a caller that needs
something of a judge calls a member the Judge protocol declares, and never asks what the judge is. The rule,
checked on the AST of every module under runner/ (imports and calls inside functions included):

1. No `isinstance` or `issubclass` against a service class of another package. A service class is a class
   defined under runner/ that is not a value type (a pydantic model, a dataclass, an enum, an exception, a
   NamedTuple or TypedDict, or a subclass of one of these); protocols count as service classes. "Another
   package" is the folder of the module that defines the class (runner/judges, runner/suites/iwebgen,
   runner/turns, ...): a package may tell its own implementations apart (runner/models narrows a model to a
   vLLM-served one, `vllm_served`), everyone else holds the protocol.
2. No `getattr`, `hasattr`, `setattr` or `delattr` on an object named for a protocol role: a variable or
   attribute whose name, leading underscores dropped, is one of ROLE_NAMES or ends in `_<role>`
   (`judge`, `self._model`, `diagnostic_model`). Objects reached through a config section (`config.model`,
   `settings.judge`) are configuration data, not implementations, and are not checked.
3. No attribute assigned on such an object from outside it (`judge.rubric = ...`): a protocol offers a
   member for what a caller may change (`Judge.use_rubric`). `self.<role> = ...` is the object's own state.

ALLOWED lists the exceptions, each with why it is not a protocol probe.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "runner"

ROLE_NAMES = frozenset({"judge", "actor", "sandbox", "model", "suite", "pool", "browsers", "strategy",
                        "first_pass", "rubric", "tracker"})
CONFIG_ROOTS = frozenset({"config", "settings", "options", "suite_config", "raw"})
PROBES = frozenset({"getattr", "hasattr", "setattr", "delattr"})
CLASS_TESTS = frozenset({"isinstance", "issubclass"})
# Bases that make a class a value type (data, not a service with hooks).
VALUE_BASES = frozenset({"BaseModel", "BaseException", "Exception", "RuntimeError", "ValueError", "TypeError",
                         "OSError", "KeyError", "LookupError", "TimeoutError", "ConnectionError", "Enum",
                         "StrEnum", "IntEnum", "Flag", "NamedTuple", "TypedDict", "RootModel", "Warning"})

# (module path, the offending source) -> why it is not a protocol probe.
ALLOWED: dict[tuple[str, str], str] = {
    # `judge` is the config's judge section (a JudgeConfig): data that names a judge, not a Judge.
    ("runner/run/lineage.py", "getattr(judge, 'kind', None)"): "the judge's configuration, not a Judge",
    # A role's model configuration (a ModelConfig from the composed config, or its mapping), not a built Model.
    ("runner/suites/evogenui/suite.py", "getattr(model, 'vision', None)"): "a model's configuration, not a Model",
    ("runner/suites/evogenui/suite.py", "getattr(model, 'model_extra', None)"): "a model's configuration, not a Model",
    # The factory names the model it has just built from its config (`name` is a declared member of Model).
    ("runner/models/providers.py", "model.name"): "the model factory setting a declared member of what it built",
}


@dataclass(frozen=True)
class ClassInfo:
    module: str  # dotted module name
    package: str  # the folder that owns it, dotted
    bases: tuple[str, ...]  # the last name of each base
    dataclass: bool


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):  # Generic[T], BaseModel subclasses with parameters
        return _last_name(node.value)
    return None


def _classes(modules: dict[str, Path], trees: dict[str, ast.Module]) -> dict[tuple[str, str], ClassInfo]:
    classes: dict[tuple[str, str], ClassInfo] = {}
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = tuple(name for name in map(_last_name, node.bases) if name)
                is_dataclass = any(_last_name(d.func if isinstance(d, ast.Call) else d) == "dataclass"
                                   for d in node.decorator_list)
                classes[(module, node.name)] = ClassInfo(module, _package_of(module, modules[module]), bases,
                                                         is_dataclass)
    return classes


def _is_value_type(name: str, classes: dict[tuple[str, str], ClassInfo], seen: frozenset[str] = frozenset()) -> bool:
    """A value type by its own definition or a project base's (bases resolved by name within runner/)."""
    if name in VALUE_BASES:
        return True
    if name in seen:
        return False
    infos = [info for (module, cls), info in classes.items() if cls == name]
    return any(info.dataclass or any(_is_value_type(base, classes, seen | {name}) for base in info.bases)
               for info in infos)


def _imported_classes(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """local name -> (module, class name) for every `from runner.x import Name [as alias]` in the module."""
    names: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("runner") and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = (node.module, alias.name)
    return names


def _role_of(node: ast.expr) -> str | None:
    """The protocol role an object is named for, or None (config sections and other names)."""
    root = node
    chain: list[str] = []
    while isinstance(root, ast.Attribute):
        chain.append(root.attr)
        root = root.value
    if isinstance(root, ast.Name):
        chain.append(root.id)
    if not chain or any(part in CONFIG_ROOTS for part in chain[1:]):
        return None
    name = chain[0].lstrip("_")
    if name in ROLE_NAMES or any(name.endswith(f"_{role}") for role in ROLE_NAMES):
        return name
    return None


def _module_violations(path: str, package: str, tree: ast.Module,
                       classes: dict[tuple[str, str], ClassInfo]) -> list[str]:
    """Each probe in one module (`path` relative to the repository, `package` dotted) that ALLOWED does not list."""
    imported = _imported_classes(tree)
    found: list[str] = []

    def report(node: ast.expr, why: str) -> None:
        source = ast.unparse(node)
        if (path, source) not in ALLOWED:
            found.append(f"{path}:{node.lineno}: {source}  ({why})")

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            if node.func.id in CLASS_TESTS and len(node.args) == 2:
                tested = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
                for target in tested:
                    origin = imported.get(_last_name(target) or "")
                    info = classes.get(origin) if origin else None
                    if info is not None and info.package != package and not _is_value_type(origin[1], classes):
                        report(node, f"tests for {origin[0]}.{origin[1]}, a service class of {info.package}")
            elif node.func.id in PROBES and _role_of(node.args[0]):
                report(node, f"probes a {_role_of(node.args[0])}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                outside = not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                               and target.value.id in {"self", "cls"})
                if isinstance(target, ast.Attribute) and outside and _role_of(target.value):
                    report(target, f"assigns onto a {_role_of(target.value)} from outside it")
    return found


def _project() -> tuple[dict[str, Path], dict[str, ast.Module], dict[tuple[str, str], ClassInfo]]:
    modules = _modules()
    trees = {module: ast.parse(path.read_text(), filename=str(path)) for module, path in modules.items()}
    return modules, trees, _classes(modules, trees)


def _violations() -> list[str]:
    modules, trees, classes = _project()
    found: list[str] = []
    for module, tree in trees.items():
        path = modules[module]
        found += _module_violations(path.relative_to(REPO_ROOT).as_posix(), _package_of(module, path), tree, classes)
    return found


def test_no_module_probes_a_protocol_implementation() -> None:
    violations = _violations()
    assert not violations, "call a member the protocol declares instead:\n" + "\n".join(violations)


def test_the_rule_sees_each_kind_of_probe() -> None:
    """The checks themselves, on a made-up suite module: each kind of probe is reported; a config section, a
    value type, the object's own state and a class of the module's own package are not."""
    source = (
        "from runner.judges.llm import LLMJudge\n"
        "from runner.judges.base import JudgeError\n"
        "from runner.suites.iwebgen.rubric import IWebGenRubric\n"
        "isinstance(judge, LLMJudge)\n"
        "isinstance(error, (JudgeError, ValueError))\n"
        "isinstance(rubric, IWebGenRubric)\n"
        "getattr(judge, 'wants_live_checks', False)\n"
        "hasattr(self._model, 'settings')\n"
        "judge.rubric = other\n"
        "getattr(config.model, 'vision', None)\n"
        "getattr(label, 'winner')\n"
        "self.model = model\n"
    )
    _, _, classes = _project()
    found = [line.split(": ", 1)[1].split("  (")[0]
             for line in _module_violations("runner/suites/iwebgen/made_up.py", "runner.suites.iwebgen",
                                            ast.parse(source), classes)]
    assert sorted(found) == sorted(["isinstance(judge, LLMJudge)", "getattr(judge, 'wants_live_checks', False)",
                                    "hasattr(self._model, 'settings')", "judge.rubric"])
