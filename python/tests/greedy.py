"""Text into real vocabulary ids without the tokenizer's own code: shared by the tests and
`benches/masks.py`."""


def greedy_encoder(tok):
    """Longest-match encoding over the vocabulary's exact bytes: a real id sequence whose
    bytes are the text (not the tokenizer's own merges, which the masks do not depend on)."""
    by_bytes = {}
    for i in range(tok.vocab_size):
        if tok.token_kind(i) == "text":
            by_bytes.setdefault(tok.token_bytes(i), i)
    longest = max(len(b) for b in by_bytes)

    def encode(data):
        ids, at = [], 0
        while at < len(data):
            for n in range(min(longest, len(data) - at), 0, -1):
                i = by_bytes.get(data[at : at + n])
                if i is not None:
                    ids.append(i)
                    at += n
                    break
            else:
                raise ValueError(f"no token for byte {data[at]}")
        return ids

    return encode
