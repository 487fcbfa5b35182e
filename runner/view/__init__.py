"""The local viewer: one web app over finished runs and sweeps (runs and comparison, a model's profile across
protocols, episode filmstrips, turn detail) with FlowEval's arena and the annotation pages as modes of it.

    python -m runner.view RUN_DIR_OR_SWEEP... [--port 8765]
    python -m runner.view RUN_DIR... --export OUT_DIR      # the same pages as files, for sharing

Everything a model or a page produced is untrusted: templates autoescape, evidence files are served with a
Content-Security-Policy that lets nothing run, and the app binds to 127.0.0.1 unless told otherwise.
"""
