"""The arena page of FlowEval §4: people compare two generated sites for the same prompt, blind."""
