"""The pinned web template: file vetting, the shared node_modules install, workspace layout."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from runner.sandbox import web_template
from runner.sandbox.web_template import (
    RESERVED_FILES,
    TEMPLATE_DIR,
    ensure_template_modules,
    module_specifiers,
    prepare_workspace,
    validate_files,
)

GOOD_APP = 'import { useState } from "react";\nexport default function App() { return <p>hi</p>; }\n'


def test_reserved_files_exist_in_every_prepared_workspace(tmp_path):
    assert TEMPLATE_DIR.name == "web_template"
    for template in web_template.TEMPLATES.values():
        workspace = web_template.prepare_workspace({}, tmp_path / template.name, tmp_path, template.name)
        for name in template.reserved_files:
            if name != "vite.config.ts":  # reserved so a model cannot add one beside the JavaScript config
                assert (workspace / name).is_file(), (template.name, name)


def test_good_files_pass():
    files = {
        "src/App.jsx": GOOD_APP,
        "src/parts/List.jsx": 'import React from "react";\nimport { createRoot } from "react-dom/client";\n'
        'import "./list.css";\nimport { x } from "../util.js";\nimport { jsx } from "react/jsx-runtime";\n',
        "src/parts/list.css": "li { color: red }",
        "src/util.js": "export const x = 1; // import nope from 'left-pad'\n/* require('fs') */\n",
    }
    assert validate_files(files) == []


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("App.jsx", "under src/"),
        ("public/x.js", "under src/"),
        ("src/../index.html", "'..'"),
        ("../src/App.jsx", "'..'"),
        ("/src/App.jsx", "absolute"),
        ("src\\App.jsx", "backslash"),
        ("src/main.jsx", "reserved"),
        ("src/toolClient.js", "reserved"),
        ("vite.config.js", "reserved"),
        ("package.json", "reserved"),
        ("src", "under src/"),
    ],
)
def test_bad_paths_rejected(path, fragment):
    reasons = validate_files({path: "export default 1;"})
    assert len(reasons) == 1 and fragment in reasons[0], reasons


@pytest.mark.parametrize(
    "source",
    [
        'import _ from "lodash";',
        "import {a} from 'lodash/fp';",
        'import "left-pad";',
        'export { x } from "evil";',
        'const m = await import("axios");',
        "const fs = require('fs');",
        'import x from "@scope/pkg/sub";',
        'import v from "vite";',
        "import * as m from 'reactive'",
        'import x from "node:fs";',
    ],
)
def test_unknown_package_imports_rejected(source):
    reasons = validate_files({"src/App.jsx": source})
    assert reasons and "does not provide" in reasons[0], reasons


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("src/App.jsx", "import pkg from '../node_modules/vite/package.json';"),
        ("src/deep/App.jsx", 'const m = await import("../../node_modules/react/index.js?raw");'),
        ("src/App.jsx", "import x from '/node_modules/vite/package.json';"),
        ("src/App.jsx", "const all = import.meta.glob('/node_modules/vite/*.json');"),
        ("src/page.css", "body { background: url(../node_modules/x/logo.png); }"),
    ],
)
def test_paths_into_the_template_modules_are_rejected(path, source):
    reasons = validate_files({"src/App.jsx": "export default () => null;\n", path: source})
    assert any("node_modules" in reason for reason in reasons), reasons


def test_a_folder_of_the_answer_named_like_node_modules_is_its_own():
    files = {"src/App.jsx": "import x from './node_modules/x.js';\n", "src/node_modules/x.js": "export default 1;\n"}
    assert validate_files(files) == []


def test_module_specifiers_cover_import_forms():
    source = """
    import A, { b } from "react";
    import * as C from 'react-dom/client';
    import "./side.css";
    export * from "./re";
    const d = import("./lazy.jsx");
    const e = require("./cjs");
    """
    assert sorted(module_specifiers(source)) == sorted(
        ["react", "react-dom/client", "./side.css", "./re", "./lazy.jsx", "./cjs"]
    )


def test_size_and_count_caps():
    assert any("exceeds" in r for r in validate_files({"src/big.js": "x" * 2000}, max_file_bytes=1000))
    many = {f"src/f{i}.js": "" for i in range(5)}
    assert any("too many files" in r for r in validate_files(many, max_files=4))


def test_ensure_template_modules_installs_once(tmp_path):
    """Two concurrent callers on a fresh cache folder: one install, both get the same complete tree."""
    shared_npm = web_template.DEFAULT_CACHE_ROOT / "npm"
    if shared_npm.is_dir():  # reuse the downloaded tarballs so this test needs no network when warm
        (tmp_path / "npm").symlink_to(shared_npm)
    results: list[Path] = []
    errors: list[BaseException] = []

    def worker():
        try:
            results.append(ensure_template_modules(tmp_path))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    cold = time.monotonic() - started
    assert not errors, errors
    assert len(results) == 2 and results[0] == results[1]
    modules = results[0]
    assert modules == tmp_path / "web-template" / web_template.template_hash() / "node_modules"
    assert (modules / "vite" / "bin" / "vite.js").is_file()
    assert (modules / "react" / "package.json").is_file()
    assert [p.name for p in modules.parent.iterdir() if p.name.startswith("install-")] == []
    started = time.monotonic()
    assert ensure_template_modules(tmp_path) == modules
    warm = time.monotonic() - started
    print(f"template install: cold {cold:.2f}s, warm {warm * 1000:.2f}ms")
    assert warm < 0.1


def test_prepare_workspace_layout(tmp_path):
    modules = ensure_template_modules()
    ws = tmp_path / "ws"
    (ws / "stale").mkdir(parents=True)  # a previous turn's leftovers must go
    prepare_workspace({"src/App.jsx": GOOD_APP, "src/deep/a.js": "export const a = 1;"}, ws, modules)
    assert not (ws / "stale").exists()
    assert (ws / "src" / "App.jsx").read_text() == GOOD_APP
    assert (ws / "src" / "deep" / "a.js").is_file()
    for name in RESERVED_FILES:
        source = web_template.WORKSPACE_GUARD if name == web_template.WORKSPACE_GUARD.name else TEMPLATE_DIR / name
        assert (ws / name).read_bytes() == source.read_bytes()
    assert (ws / "node_modules").is_symlink() and os.readlink(ws / "node_modules") == str(modules)
    with pytest.raises(ValueError):
        prepare_workspace({"../escape.js": ""}, tmp_path / "ws2", modules)


@pytest.mark.build
def test_prepared_workspace_builds_on_host(tmp_path):
    """The symlinked node_modules resolves for vite (outside the sandbox too)."""
    ws = prepare_workspace({"src/App.jsx": GOOD_APP}, tmp_path / "ws", ensure_template_modules())
    proc = subprocess.run(
        ["node", "node_modules/vite/bin/vite.js", "build", "--configLoader", "native"],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (ws / "dist" / "index.html").is_file()
    assert list((ws / "dist" / "assets").glob("*.js"))


# --- the EvoGenUI-Bench scaffold (suite template `evogenui`) ----------------------------------------

BENCH_APP = (
    "import { useEffect, useState } from 'react'\n"
    "import { callTool } from './genui/toolClient'\n"
    "import { readResource } from './genui/resourceClient'\n"
    "import { Panel } from './components/Panel'\n"
    "export default function App() { return <Panel /> }\n"
)


def test_evogenui_template_has_the_scaffold_files_and_its_own_rules():
    spec = web_template.get_template("evogenui")
    for name in ("src/App.tsx", "src/main.tsx", "src/genui/toolClient.ts", "src/genui/resourceClient.ts",
                 "public/__genui_runtime.js", "vite.config.js", "package-lock.json"):
        assert (spec.directory / name).is_file(), name
    assert json.loads((spec.directory / "package.json").read_text())["dependencies"] == {"react": "18.3.1", "react-dom": "18.3.1"}
    assert web_template.template_hash("evogenui") != web_template.template_hash()
    files = {"src/App.tsx": BENCH_APP, "src/components/Panel.tsx": "export function Panel() { return <p>x</p> }\n"}
    assert validate_files(files, template="evogenui") == []
    reasons = validate_files({**files, "src/genui/toolClient.ts": "export const x = 1\n",
                              "src/Chart.tsx": "import { LineChart } from 'recharts'\n"}, template="evogenui")
    assert any("src/genui/toolClient.ts" in r and "reserved" in r for r in reasons), reasons
    assert any("'recharts'" in r and "does not provide" in r for r in reasons), reasons
    # the default template keeps its own reserved entry file and knows nothing of src/genui/
    assert validate_files({"src/genui/toolClient.ts": "export const x = 1\n"}) == []
    with pytest.raises(ValueError, match="unknown web template"):
        web_template.get_template("nope")


# --- FlowEval's environment (suite template `floweval`, FlowEval Appendix A) --------------------------

FLOWEVAL_PACKAGES = ("@fortawesome/fontawesome-svg-core", "@fortawesome/free-solid-svg-icons",
                     "@fortawesome/react-fontawesome")


def test_floweval_template_has_the_promised_environment_and_its_own_rules():
    spec = web_template.get_template("floweval")
    for name in ("src/App.jsx", "src/main.jsx", "src/index.css", "tailwind.config.js", "vite.config.js",
                 "index.html", "package-lock.json"):
        assert (spec.directory / name).is_file(), name
    package = json.loads((spec.directory / "package.json").read_text())
    pins = {**package["dependencies"], **package["devDependencies"]}
    assert set(FLOWEVAL_PACKAGES) <= set(pins) and pins["react"] == "18.3.1" and pins["tailwindcss"].startswith("3.4.")
    assert all(version[0].isdigit() for version in pins.values()), "exact pins only"
    lock = json.loads((spec.directory / "package-lock.json").read_text())["packages"]
    assert all(lock[f"node_modules/{name}"]["version"] == version for name, version in pins.items())
    assert "@tailwind utilities;" in (spec.directory / "src" / "index.css").read_text()
    assert '"./src/**/*.{js,jsx}"' in (spec.directory / "tailwind.config.js").read_text()
    assert "workspaceGuard()" in (spec.directory / "vite.config.js").read_text()
    assert web_template.template_hash("floweval") not in {web_template.template_hash(),
                                                           web_template.template_hash("evogenui")}
    app = "".join(f"import * as m{i} from '{name}'\n" for i, name in enumerate(FLOWEVAL_PACKAGES))
    files = {"src/App.jsx": app + "export function App() { return <p className='p-4'>x</p> }\n",
             "src/data.js": "export const rows = []\n", "src/theme.css": ".x { @apply p-4; }\n"}
    assert validate_files(files, template="floweval") == []
    reasons = validate_files({**files, "src/index.css": "body {}\n",
                              "src/Chart.jsx": "import { LineChart } from 'recharts'\n"}, template="floweval")
    assert any("src/index.css" in r and "reserved" in r for r in reasons), reasons
    assert any("'recharts'" in r and "does not provide" in r for r in reasons), reasons
    # the other templates provide no FontAwesome
    assert validate_files({"src/App.jsx": app}) != []


def test_name_checks_end_on_absolute_and_escaping_paths():
    from runner.sandbox.web_template import name_problems

    assert name_problems(["/etc/evil", "../../etc/evil", "src/../../x"]) == []  # other checks refuse these
    assert name_problems(["/etc", "/etc/evil"]) == ["'/etc': is a file and also the folder of '/etc/evil'"]


def test_a_stale_npm_cache_index_falls_back_to_asking_the_registry(tmp_path, monkeypatch):
    # Fault injection: an npm whose cached package index predates a pinned version fails --prefer-offline
    # ("No matching version found"); the install asks the registry once instead of failing the run.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.txt"
    fake = bin_dir / "npm"
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{calls}"\n'
        'case "$*" in *--prefer-offline*) echo "npm error notarget No matching version found" >&2; exit 1;; esac\n'
        "mkdir -p node_modules/vite && echo ok > node_modules/vite/marker\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    modules = ensure_template_modules(tmp_path / "cache")
    assert (modules / "vite" / "marker").is_file()
    tried = calls.read_text().splitlines()
    assert len(tried) == 2 and "--prefer-offline" in tried[0] and "--prefer-online" in tried[1]


def test_an_install_that_fails_both_ways_says_so(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text("#!/bin/sh\necho 'npm error network down' >&2\nexit 1\n")
    (bin_dir / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    with pytest.raises(RuntimeError, match="(?s)from the cache first.*network down.*then asking the registry"):
        ensure_template_modules(tmp_path / "cache")
