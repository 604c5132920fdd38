"""Runs the official Python RLM (alexzhang13/rlm) once, as a user would, for benchmarks/context.ts.

Usage: python official-rlm.py BASE_URL MODEL QUESTION PATH
PATH is a file (the context is its text, one string) or a folder (the context is the list of its files'
texts, in sorted path order, as rlm orders a folder). Prints one JSON line: {"answer": ...}.
"""

import json
import os
import sys

from rlm import RLM


def read_context(path):
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    texts = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            with open(os.path.join(root, name), encoding="utf-8") as f:
                texts.append(f.read())
    return texts


def main():
    base_url, model, question, path = sys.argv[1:5]
    context = read_context(path)
    rlm = RLM(
        backend="openai",
        backend_kwargs={"model_name": model, "base_url": base_url, "api_key": "bench"},
        max_depth=1,
        max_iterations=3,
    )
    result = rlm.completion(context, root_prompt=question)
    print(json.dumps({"answer": result.response}))


if __name__ == "__main__":
    main()
