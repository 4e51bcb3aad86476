#!/usr/bin/env python3
"""Write a random BERT-shaped ONNX model for the onnx embedder's tests.

The graph has the inputs and output of a sentence-transformers ONNX export
(input_ids, attention_mask, optionally token_type_ids → last_hidden_state
[batch, sequence, hidden]) and random weights:

    x = LayerNorm(word_emb[input_ids] + pos_emb[0..S) (+ type_emb[token_type_ids]))
    repeated --layers times (post-LN encoder layer, as BERT/RoBERTa):
        x = LayerNorm(x + SelfAttention(x, attention_mask))
        x = LayerNorm(x + W2 · gelu(W1 · x))
    last_hidden_state = x

Padding positions are masked out of attention with a -10000 bias, so a text
gets the same token vectors whatever it is padded to. Scores made with it
are meaningless; it exercises tokenizer → tensors → runtime → pooling. The
default is tiny (hidden 16, one layer); `--shape distilroberta` gives the
sizes of all-distilroberta-v1 (6 layers, hidden 768, 12 heads, FFN 3072,
vocabulary 50265, 514 positions; ≈330 MB) for throughput benchmarks.

With --expect IDS.json OUT.json it also writes, computed here with numpy,
the mean-pooled, L2-normalised sentence vector of each token-id list in
IDS.json (a JSON list of lists): the reference the Go test compares with.

Needs Debian's python3-onnx (onnx + numpy), nothing else.

usage: tiny_model.py OUT.onnx [--shape tiny|distilroberta] [--vocab N]
       [--hidden H] [--layers L] [--heads A] [--ffn F] [--max-pos P]
       [--token-type-ids] [--seed S] [--expect IDS.json OUT.json]
"""
import argparse
import json
import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SHAPES = {
    "tiny": dict(vocab=121, hidden=16, layers=1, heads=2, ffn=32, max_pos=64),
    "distilroberta": dict(vocab=50265, hidden=768, layers=6, heads=12, ffn=3072, max_pos=514),
}
EPS = 1e-5


def weights(a):
    rng = np.random.default_rng(a.seed)
    h, f = a.hidden, a.ffn

    def mat(r, c):
        return (rng.standard_normal((r, c)) / math.sqrt(r)).astype(np.float32)

    def vec(n, scale=0.02):
        return (rng.standard_normal(n) * scale).astype(np.float32)

    w = {
        "word_emb": rng.standard_normal((a.vocab, h)).astype(np.float32),
        "pos_emb": (rng.standard_normal((a.max_pos, h)) * 0.1).astype(np.float32),
        "emb_ln_g": np.ones(h, np.float32) + vec(h),
        "emb_ln_b": vec(h),
    }
    if a.token_type_ids:
        w["type_emb"] = rng.standard_normal((2, h)).astype(np.float32)
    for l in range(a.layers):
        p = f"l{l}_"
        for n in "qkvo":
            w[p + "w" + n] = mat(h, h)
            w[p + "b" + n] = vec(h)
        w[p + "ln1_g"], w[p + "ln1_b"] = np.ones(h, np.float32) + vec(h), vec(h)
        w[p + "w1"], w[p + "b1"] = mat(h, f), vec(f)
        w[p + "w2"], w[p + "b2"] = mat(f, h), vec(h)
        w[p + "ln2_g"], w[p + "ln2_b"] = np.ones(h, np.float32) + vec(h), vec(h)
    return w


def build(a, w):
    h, nh = a.hidden, a.heads
    hd = h // nh
    inits = [numpy_helper.from_array(v, k) for k, v in w.items()]

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    seq = ["batch", "sequence"]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, seq),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, seq),
    ]
    nodes = []

    def node(op, ins, out, **kw):
        nodes.append(helper.make_node(op, ins, [out], **kw))
        return out

    # Embeddings: words + positions (+ token types), LayerNorm.
    x = node("Gather", ["word_emb", "input_ids"], "words", axis=0)
    shape = node("Shape", ["input_ids"], "ids_shape")
    s = node("Gather", [shape, const("one", np.array(1, np.int64))], "seq_len", axis=0)
    rng = node("Range", [const("zero", np.array(0, np.int64)), s, const("step", np.array(1, np.int64))], "positions")
    pos = node("Gather", ["pos_emb", rng], "pos_vecs", axis=0)
    x = node("Add", [x, pos], "emb_sum")
    if a.token_type_ids:
        inputs.append(helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, seq))
        t = node("Gather", ["type_emb", "token_type_ids"], "types", axis=0)
        x = node("Add", [x, t], "emb_sum_t")
    x = node("LayerNormalization", [x, "emb_ln_g", "emb_ln_b"], "emb_out", axis=-1, epsilon=EPS)

    # Attention bias: 0 where attended, -10000 at padding; [B, 1, 1, S].
    m = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    inv = node("Sub", [const("f_one", np.array(1, np.float32)), m], "mask_inv")
    bias = node("Mul", [inv, const("neg", np.array(-10000, np.float32))], "mask_bias")
    bias = node("Unsqueeze", [bias, const("axes12", np.array([1, 2], np.int64))], "mask_bias4")
    heads_shape = const("heads_shape", np.array([0, 0, nh, hd], np.int64))
    merge_shape = const("merge_shape", np.array([0, 0, h], np.int64))
    scale = const("scale", np.array(1 / math.sqrt(hd), np.float32))
    sqrt2 = const("sqrt2", np.array(math.sqrt(2), np.float32))
    half = const("half", np.array(0.5, np.float32))

    for l in range(a.layers):
        p = f"l{l}_"

        def proj(n, src):
            y = node("MatMul", [src, p + "w" + n], p + n + "_mm")
            return node("Add", [y, p + "b" + n], p + n)

        q = node("Reshape", [proj("q", x), heads_shape], p + "q4")
        k = node("Reshape", [proj("k", x), heads_shape], p + "k4")
        v = node("Reshape", [proj("v", x), heads_shape], p + "v4")
        q = node("Transpose", [q], p + "qt", perm=[0, 2, 1, 3])  # B nh S hd
        k = node("Transpose", [k], p + "kt", perm=[0, 2, 3, 1])  # B nh hd S
        v = node("Transpose", [v], p + "vt", perm=[0, 2, 1, 3])
        sc = node("Mul", [node("MatMul", [q, k], p + "qk"), scale], p + "scaled")
        sc = node("Add", [sc, bias], p + "masked")
        pr = node("Softmax", [sc], p + "probs", axis=-1)
        c = node("Transpose", [node("MatMul", [pr, v], p + "ctx4")], p + "ctxt", perm=[0, 2, 1, 3])
        c = node("Reshape", [c, merge_shape], p + "ctx")
        o = node("Add", [node("MatMul", [c, p + "wo"], p + "o_mm"), p + "bo"], p + "attn")
        x = node("LayerNormalization", [node("Add", [x, o], p + "res1"), p + "ln1_g", p + "ln1_b"], p + "x1", axis=-1, epsilon=EPS)
        f1 = node("Add", [node("MatMul", [x, p + "w1"], p + "f1_mm"), p + "b1"], p + "f1")
        erf = node("Erf", [node("Div", [f1, sqrt2], p + "f1s")], p + "erf")
        g = node("Mul", [node("Mul", [f1, half], p + "f1h"), node("Add", [erf, "f_one"], p + "erf1")], p + "gelu")
        f2 = node("Add", [node("MatMul", [g, p + "w2"], p + "f2_mm"), p + "b2"], p + "f2")
        x = node("LayerNormalization", [node("Add", [x, f2], p + "res2"), p + "ln2_g", p + "ln2_b"], p + "x2", axis=-1, epsilon=EPS)

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", h])
    graph = helper.make_graph(nodes, "tiny_bert", inputs, [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="evident-tiny-bert")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def layer_norm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + EPS) * g + b


def erf(x):
    return np.vectorize(math.erf)(x).astype(np.float64)


def forward(a, w, ids):
    """Token vectors of one unpadded sequence, float64."""
    ids = np.asarray(ids)
    x = w["word_emb"][ids].astype(np.float64) + w["pos_emb"][: len(ids)]
    if a.token_type_ids:
        x = x + w["type_emb"][np.zeros(len(ids), np.int64)]
    x = layer_norm(x, w["emb_ln_g"], w["emb_ln_b"])
    nh, hd = a.heads, a.hidden // a.heads
    for l in range(a.layers):
        p = f"l{l}_"

        def proj(n):
            return x @ w[p + "w" + n] + w[p + "b" + n]

        q, k, v = (proj(n).reshape(len(ids), nh, hd).transpose(1, 0, 2) for n in "qkv")
        sc = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        sc = np.exp(sc - sc.max(-1, keepdims=True))
        pr = sc / sc.sum(-1, keepdims=True)
        c = (pr @ v).transpose(1, 0, 2).reshape(len(ids), a.hidden)
        x = layer_norm(x + c @ w[p + "wo"] + w[p + "bo"], w[p + "ln1_g"], w[p + "ln1_b"])
        f1 = x @ w[p + "w1"] + w[p + "b1"]
        g = 0.5 * f1 * (1 + erf(f1 / math.sqrt(2)))
        x = layer_norm(x + g @ w[p + "w2"] + w[p + "b2"], w[p + "ln2_g"], w[p + "ln2_b"])
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="tiny")
    for k in ("vocab", "hidden", "layers", "heads", "ffn", "max_pos"):
        ap.add_argument("--" + k.replace("_", "-"), type=int)
    ap.add_argument("--token-type-ids", action="store_true")
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--expect", nargs=2, metavar=("IDS_JSON", "OUT_JSON"))
    a = ap.parse_args()
    for k, v in SHAPES[a.shape].items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    if a.hidden % a.heads:
        ap.error("--hidden must be a multiple of --heads")

    w = weights(a)
    onnx.save(build(a, w), a.out)
    if a.expect:
        with open(a.expect[0]) as f:
            seqs = json.load(f)
        vecs = []
        for ids in seqs:
            v = forward(a, w, ids).mean(0)
            vecs.append((v / max(np.linalg.norm(v), 1e-12)).tolist())
        with open(a.expect[1], "w") as f:
            json.dump(vecs, f)


if __name__ == "__main__":
    main()
