-- 0002: a content-addressed cache of model answers (persona/summarize), so a
-- re-run sends nothing for a request it already asked. key is the caller's
-- content address: sha256 (hex) over prompt version, provider, model and the
-- request as JSON. response is the answer as the caller encoded it (JSON);
-- prompt_version, provider and model are kept for housekeeping only.
CREATE TABLE llm_cache (
    key            TEXT    PRIMARY KEY,
    prompt_version TEXT    NOT NULL,
    provider       TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    response       TEXT    NOT NULL,
    input_tokens   INTEGER NOT NULL DEFAULT 0,
    output_tokens  INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT    NOT NULL
) STRICT;
