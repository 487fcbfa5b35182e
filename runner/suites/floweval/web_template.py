"""FlowEval's harness as a web template (`suite.web_template=floweval`; runner/sandbox/web_template.py):
React 18 + Vite 7, `src/App.jsx`, TailwindCSS 3 via PostCSS, FontAwesome."""

from __future__ import annotations

from pathlib import Path

from runner.sandbox.web_template import WebTemplate

# Appendix A: React JSX with src/App.jsx as the main view, TailwindCSS for styling and the three FontAwesome
# packages "you can assume ... are installed"; the entry, Tailwind's layers and the configs stay the template's
# ("you must not change or edit any other files").
TEMPLATE = WebTemplate(
    "floweval",
    Path(__file__).resolve().parent / "web_templates" / "floweval",
    frozenset({"index.html", "package.json", "package-lock.json", "vite.config.js", "tailwind.config.js",
               "workspace-guard.js", "src/main.jsx", "src/index.css"}),
    allowed_packages=("react", "react-dom", "@fortawesome/fontawesome-svg-core",
                      "@fortawesome/free-solid-svg-icons", "@fortawesome/react-fontawesome"),
)
