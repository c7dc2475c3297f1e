"""The reference solutions of the implement-it exercises, as the body of the learner's function
(after its docstring), written from bertlib's own implementations. ``tools/assignments.py`` puts
each between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` in the instructor's version of an
assignment; nbgrader removes it from the students' version. Not part of the bertlib package.
tests/classroom/test_assignments.py checks each against bertlib's reference in the sandbox."""

SOLUTIONS = {
    "02_tokens_and_segments": '''\
tokens = ["<cls>", *tokens_a, "<sep>"]
segments = [0] * len(tokens)
if tokens_b is not None:
    tokens += [*tokens_b, "<sep>"]
    segments += [1] * (len(tokens_b) + 1)
return tokens, segments''',
    "02_wordpiece": '''\
found, start = [], 0
while start < len(word):
    for end in range(len(word), start, -1):  # the longest piece first
        piece = word[start:end] if start == 0 else "##" + word[start:end]
        if piece in pieces:
            found.append(piece)
            start = end
            break
    else:  # no piece fits here: the whole word is unknown
        return ["<unk>"]
return found''',
    "03_attention_weights": '''\
B, T, H = X.shape
nh = attention.num_heads
q, k = (W(X).view(B, T, nh, H // nh).transpose(1, 2) for W in (attention.W_q, attention.W_k))
scores = q @ k.transpose(-2, -1) / math.sqrt(H // nh)  # (B, nh, T, T)
if valid_lens is not None:
    real = torch.arange(T)[None, :] < valid_lens[:, None]  # (B, T): the real keys
    scores = scores.masked_fill(~real[:, None, None, :], float("-inf"))
return scores.softmax(dim=-1)''',
    "04_mlm_gather": '''\
batch_idx = torch.arange(X.shape[0])[:, None]  # (B, 1), broadcasts against (B, P)
return X[batch_idx, pred_positions]''',
    "05_nsp_pair_builder": '''\
g = torch.Generator().manual_seed(seed)
pairs = []
for p, paragraph in enumerate(paragraphs):
    for i in range(len(paragraph) - 1):
        a, b, is_next = get_next_sentence(paragraph[i], paragraph[i + 1], paragraphs, p, g)
        if len(a) + len(b) + 3 > max_len:  # <cls> a <sep> b <sep>
            continue
        tokens, segments = get_tokens_and_segments(a, b)
        pairs.append((tokens, segments, is_next))
return pairs''',
    "06_mlm_loss": '''\
V = mlm_Y_hat.shape[-1]
per_slot = F.cross_entropy(mlm_Y_hat.reshape(-1, V), mlm_Y.reshape(-1).long(),
                           reduction="none")
w = mlm_weights.reshape(-1).to(per_slot.dtype)
return (per_slot * w).sum() / w.sum()''',
    "11_tagging_loss": '''\
C = Y_hat.shape[-1]
return F.cross_entropy(Y_hat.reshape(-1, C), labels.reshape(-1), ignore_index=IGNORE)''',
    "11_best_span": '''\
T = scores.shape[2]
both = scores[:, 0, :, None] + scores[:, 1, None, :]  # (B, T, T): the span from i to j
i = torch.arange(T)
length = i[None, :] - i[:, None]  # (T, T): j - i
valid = (length >= 0) & (length < max_answer_len)
valid = valid & allowed[:, :, None] & allowed[:, None, :]  # (B, T, T)
best = both.masked_fill(~valid, float("-inf")).flatten(1).argmax(1)  # (B,)
return torch.stack([best // T, best % T], dim=1)''',
}
