#!/usr/bin/env python3
"""Converts a Hugging Face BERT sentence embedder (config.json, model.safetensors, vocab.txt,
tokenizer.json, modules.json + the pooling config) into a GGUF that llama-server serves with
`--embedding --pooling mean`.

Why not llama.cpp's own convert_hf_to_gguf.py: it imports torch at the top (conversion/base.py,
conversion/bert.py), and torch from PyPI brings the CUDA runtime packages with it (measured here:
several GB, see docs/backends-and-servers.md, "The real models"). This converter needs only numpy, PyYAML and the
`gguf` package (llama.cpp's gguf-py, from PyPI), and reproduces what llama.cpp's converter writes for
a `BertModel` (conversion/bert.py: BertModel.set_gguf_parameters, set_vocab, filter_tensors;
conversion/base.py: TextModel.set_gguf_parameters, get_vocab_base, and prepare_tensors' f16 rule):
scripts/models checks its output's sha256, and the note of issue 37 records that it matched the
official converter tensor for tensor.

    convert-bert.py MODEL_DIR OUT.gguf [--name NAME]
"""
from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path

import numpy as np
import gguf

SAFETENSORS_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": None, "I64": np.int64}


def fail(msg: str) -> None:
    print(f"convert-bert: {msg}", file=sys.stderr)
    sys.exit(2)


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The safetensors format: an 8-byte little-endian header length, a JSON header, raw data."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            fail(f"{path}: tensor {name} has dtype {info['dtype']}, which this converter does not read")
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(data[base + begin:base + end], dtype=dtype).reshape(info["shape"])
    return out


def hf_name(name: str) -> str | None:
    """BertModel.filter_tensors: drop the pooler, MLM heads and position ids; gamma/beta → weight/bias."""
    if name.startswith("bert."):
        name = name[5:]
    if name.endswith(".gamma"):
        name = name[:-6] + ".weight"
    if name.endswith(".beta"):
        name = name[:-5] + ".bias"
    if name in ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"):
        return None
    if name.startswith("cls.predictions") or name.startswith("cls.seq_relationship"):
        return None
    return name


def vocab(tok: dict) -> tuple[list[str], list[int]]:
    """get_vocab_base + BertModel.set_vocab: tokens by id, added (special) tokens CONTROL, then the
    'phantom space' spelling: ## pieces lose their ##, other non-control pieces get a leading ▁."""
    by_id = {i: t for t, i in tok["model"]["vocab"].items()}
    added = {a["id"]: a for a in tok.get("added_tokens", [])}
    n = max(by_id) + 1
    tokens, types = [], []
    for i in range(n):
        if i not in by_id:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
            continue
        t = by_id[i]
        a = added.get(i)
        if a is not None and (a.get("special") or (t.startswith("[") and t.endswith("]"))):
            types.append(gguf.TokenType.CONTROL)
        elif a is not None:
            types.append(gguf.TokenType.USER_DEFINED)
        else:
            types.append(gguf.TokenType.NORMAL)
        if types[-1] == gguf.TokenType.CONTROL:
            tokens.append(t)
        elif t.startswith("##"):
            tokens.append(t[2:])
        else:
            tokens.append("\u2581" + t)
    return tokens, types


def pooling_type(model_dir: Path) -> int | None:
    """TextModel._try_set_pooling_type: the sentence-transformers Pooling module's mode."""
    modules = model_dir / "modules.json"
    if not modules.is_file():
        return None
    for mod in json.loads(modules.read_text()):
        if mod["type"].endswith("Pooling"):
            cfg = json.loads((model_dir / mod["path"] / "config.json").read_text())
            if cfg.get("pooling_mode_mean_tokens"):
                return gguf.PoolingType.MEAN
            if cfg.get("pooling_mode_cls_token"):
                return gguf.PoolingType.CLS
            if cfg.get("pooling_mode_lasttoken"):
                return gguf.PoolingType.LAST
            fail(f"{model_dir / mod['path'] / 'config.json'}: a pooling mode this converter does not know")
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--name", default=None, help="general.name (default: the folder's name)")
    args = ap.parse_args()
    d = args.model_dir
    for f in ("config.json", "model.safetensors", "tokenizer.json"):
        if not (d / f).is_file():
            fail(f"{d}: no {f} (expected a Hugging Face BERT model folder)")
    hp = json.loads((d / "config.json").read_text())
    if "BertModel" not in hp.get("architectures", []):
        fail(f"{d / 'config.json'}: architectures {hp.get('architectures')} — this converter handles BertModel only")

    arch = gguf.MODEL_ARCH.BERT
    w = gguf.GGUFWriter(args.out, gguf.MODEL_ARCH_NAMES[arch])
    w.add_type(gguf.GGUFType.MODEL)
    w.add_name(args.name or d.name)
    w.add_block_count(hp["num_hidden_layers"])
    w.add_context_length(hp["max_position_embeddings"])
    w.add_embedding_length(hp["hidden_size"])
    w.add_feed_forward_length(hp["intermediate_size"])
    w.add_head_count(hp["num_attention_heads"])
    w.add_layer_norm_eps(hp["layer_norm_eps"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_causal_attention(False)
    if (p := pooling_type(d)) is not None:
        w.add_pooling_type(p)

    tok = json.loads((d / "tokenizer.json").read_text(encoding="utf-8"))
    tokens, types = vocab(tok)
    w.add_token_type_count(hp.get("type_vocab_size", 1))
    w.add_tokenizer_model("bert")
    # The pre-tokenizer name llama.cpp's converter derives from this tokenizer's hash (get_vocab_base's
    # chkhsh; its output for all-MiniLM-L6-v2 carries the same name).
    w.add_tokenizer_pre("jina-v2-en")
    w.add_token_list(tokens)
    w.add_token_types(types)
    gguf.SpecialVocab(d, n_vocab=len(tokens)).add_to_gguf(w)
    # The BertNormalizer's lowercase flag (newer gguf-py's SpecialVocab._parse_normalizer writes it;
    # PyPI's gguf 0.19.0 does not). Without it llama.cpp's WPM tokenizer keeps the case and an
    # uncased vocabulary answers [UNK] for every capitalised word.
    norm = tok.get("normalizer") or {}
    if norm.get("type") == "BertNormalizer" and norm.get("lowercase") is not None:
        w.add_bool("tokenizer.ggml.normalizer.lowercase", bool(norm["lowercase"]))
    if norm.get("type") == "BertNormalizer" and norm.get("strip_accents") is not None:
        w.add_bool("tokenizer.ggml.normalizer.strip_accents", bool(norm["strip_accents"]))

    names = gguf.get_tensor_name_map(arch, hp["num_hidden_layers"])
    always_f32 = ("position_embd.weight", "token_types.weight")
    for name, t in read_safetensors(d / "model.safetensors").items():
        name = hf_name(name)
        if name is None:
            continue
        new = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if new is None:
            fail(f"{d / 'model.safetensors'}: cannot map tensor {name!r} to a GGUF name")
        t = t.astype(np.float32)
        if t.ndim <= 1 or new.endswith("_norm.weight") or new in always_f32:
            w.add_tensor(new, t)
        else:
            w.add_tensor(new, t.astype(np.float16))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
