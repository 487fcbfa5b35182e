"""FlowEval: reference-based evaluation of generated UIs by interaction flows."""
