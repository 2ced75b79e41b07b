"""What extracting EVERY text unit through a model would cost, for manifest.json's cost line.

provrag extracts only the skeleton units; GraphRAG extracts all of them. Setting the
GraphRAG-style figure beside the real bill (manifest `llm`) shows what the skeleton saved,
counted with the very prompt provrag sends, so the two figures are comparable.
"""
from __future__ import annotations

from provrag.config import Config
from provrag.engines.openai import index_prompts


def full_extraction_estimate(text_units_df, cfg: Config, gleanings: int | None = None,
                             output_tokens_per_call: float | None = None, usage=None) -> dict:
    """What GraphRAG-style full extraction of EVERY unit would cost.

    Same prompt as provrag's extraction, one request per unit plus `gleanings` continuation
    rounds, each re-sending the conversation so far (GraphRAG's behaviour). Input tokens of
    the first round are counted exactly (cl100k over the rendered prompt); a gleaning round
    adds the previous reply, whose length is `output_tokens_per_call`, else provrag's own
    average reply in `usage` (an engines.base.Usage, stage "extract"), else half the unit.

    text_units_df: a polars/pandas DataFrame, a pyarrow Table or a list of dicts with a
    `text` column. Returns {"units", "calls", "input_tokens", "output_tokens_est", "gleanings"}.
    """
    if output_tokens_per_call is None and usage is not None:
        st = usage.by_stage.get("extract")
        if st is not None and st.calls:
            output_tokens_per_call = st.output_tokens / st.calls
    from provrag.text.tokens import count_tokens, count_tokens_batch

    if isinstance(text_units_df, list):
        texts = [r.get("text") or "" for r in text_units_df]
    else:
        col = text_units_df["text"]
        texts = col.to_pylist() if hasattr(col, "to_pylist") else list(col)
        texts = [t or "" for t in texts]
    g = int(cfg.extract.gleanings if gleanings is None else gleanings)
    frame = index_prompts.extract_messages("", cfg.extract.entity_types)
    frame_tokens = sum(count_tokens(m["content"]) for m in frame) + 4 * len(frame)
    glean_tokens = count_tokens(index_prompts.glean_message()["content"]) + 4
    unit_tokens = count_tokens_batch(texts) if texts else []
    calls = inp = out = 0
    for n in unit_tokens:
        reply = output_tokens_per_call if output_tokens_per_call is not None else n / 2
        prompt = frame_tokens + n
        calls += 1
        inp += prompt
        out += reply
        for _ in range(g):  # each gleaning round re-sends everything so far
            prompt += reply + 4 + glean_tokens
            calls += 1
            inp += prompt
            out += reply
    return {"units": len(texts), "calls": calls, "input_tokens": int(inp),
            "output_tokens_est": int(round(out)), "gleanings": g}
