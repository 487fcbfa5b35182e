"""How far a judge can be trusted: human labels, blinded samples, evidence ablation, stability, cross-validation.

docs/judge-validity.md describes the workflow; `python -m runner.annotate` and `python -m runner.agreement`
are its entry points.
"""
