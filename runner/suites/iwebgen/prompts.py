"""The generation payload of I-WebGenBench (§4.1, C.2): a system prompt plus one user prompt per specification.

C.2: "Each benchmark instance consists of a system prompt and a per-paper user prompt ... The user prompt
encodes the paper title, five interactive module descriptions, visual-style requirements, and
technical-stack constraints. The system prompt constrains the output format and establishes the quality
bar for interactivity." Both texts here are the project's own wording of that protocol (the paper's
Figure 7 is not reproduced). Decoding (lowest temperature, the full output budget; §4.1 "Effects of
Generation Capacity") is the model config's, not the payload's: see docs/suites/iwebgen.md.
"""

from __future__ import annotations

from typing import Any

from runner.suites.iwebgen.spec import AppSpec, ControllableParameter

__all__ = ["PROMPT_VERSION", "SYSTEM_PROMPT", "generation_messages", "user_prompt"]

PROMPT_VERSION = "iwebgen-v1"  # recorded in lineage.json; bump when either text changes

SYSTEM_PROMPT = """You are an expert front-end engineer who turns scientific papers into interactive web applications
for teaching and exploration. From the specification you are given, build ONE complete single-page application
with React 19 and Vite in a single pass.

The project template already provides index.html, package.json, vite.config.js and src/main.jsx (which renders
the default export of src/App.jsx into #root). Only `react` and `react-dom` are installed: do not import any
other package. The page runs offline: no external URLs, fonts, images or CDNs. Draw charts and diagrams
yourself with SVG, canvas or plain DOM elements.

Quality bar: every interaction element of the specification must really work. Each control (slider, button,
input, toggle, selection) must be wired to application state, and changing it must visibly update the
dependent views at once: charts, simulations, numbers and explanations. Static mock-ups, placeholder
handlers and controls that do nothing count as failures. Label axes, units and controls clearly, and follow the
visual-style and technical-stack requirements.

Reply with a short note, then the COMPLETE source of every file under src/ (at least src/App.jsx), each as a path
heading followed by one fenced code block:

### src/App.jsx
```jsx
export default function App() { ... }
```

Write every file in full, never a diff."""


def _number(value: float | str | bool | None) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _parameter(parameter: ControllableParameter) -> str:
    parts = [f"{parameter.name} ({parameter.control}"]
    if parameter.min is not None or parameter.max is not None:
        parts.append(f", range {_number(parameter.min)} to {_number(parameter.max)}")
    if parameter.default is not None:
        parts.append(f", default {_number(parameter.default)}")
    if parameter.unit:
        parts.append(f", unit {parameter.unit}")
    if parameter.options:
        parts.append(f", options: {', '.join(parameter.options)}")
    return "".join(parts) + ")"


def user_prompt(spec: AppSpec) -> str:
    """The per-paper user prompt (C.2): title, the interactive modules, visual style, technical stack."""
    lines = [f"# Paper: {spec.paper_title}", f"Domain: {spec.domain}"]
    if spec.summary:
        lines += ["", spec.summary]
    lines += ["", "## Interactive modules"]
    for number, element in enumerate(spec.interactions, start=1):
        lines.append(f"{number}. {element.name}: {element.description}")
        lines.append("   Controllable parameters: " + "; ".join(_parameter(p) for p in element.controllable_parameters))
        lines.append("   Dynamic components: " + "; ".join(element.dynamic_components))
        lines.append("   Expected responses: " + "; ".join(element.expected_responses))
    style = spec.visual_style
    lines += ["", "## Visual style", f"- Theme: {style.theme}"]
    if style.palette:
        lines.append(f"- Palette: {style.palette}")
    if style.layout:
        lines.append(f"- Layout: {style.layout}")
    lines += [f"- {note}" for note in style.notes]
    stack = spec.tech_stack
    lines += ["", "## Technical stack", f"- Framework: {stack.framework}"]
    if stack.libraries:
        lines.append(f"- Use: {', '.join(stack.libraries)}")
    if stack.forbidden:
        lines.append(f"- Do not use: {', '.join(stack.forbidden)}")
    lines += [f"- {note}" for note in stack.notes]
    return "\n".join(lines)


def generation_messages(spec: AppSpec) -> list[dict[str, Any]]:
    """§4.1: the system prompt plus the specification, one pass (OpenAI chat format)."""
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user_prompt(spec)}]
