"""EvoGenUI-Bench's scaffold as a web template (`suite.web_template=evogenui`; runner/sandbox/web_template.py):
React 18 + TypeScript + Vite 7, `src/App.tsx`, clients under `src/genui/`."""

from __future__ import annotations

from pathlib import Path

from runner.sandbox.web_template import WebTemplate

# The generator writes src/App.tsx and more under src/, never the entry, the config, the runtime script or the
# clients under src/genui/.
TEMPLATE = WebTemplate(
    "evogenui",
    Path(__file__).resolve().parent / "web_templates" / "evogenui",
    frozenset({"index.html", "package.json", "package-lock.json", "vite.config.js", "vite.config.ts", "tsconfig.json",
               "workspace-guard.js", "src/main.tsx", "public/__genui_runtime.js"}),
    reserved_prefixes=("src/genui/",),
)
