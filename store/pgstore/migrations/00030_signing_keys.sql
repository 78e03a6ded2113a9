-- Webhook-signing keys, per publisher. A publisher has at most one active
-- key (retired_at IS NULL): the partial unique index is what lets replicas
-- race to create a publisher's first key and have exactly one win.

-- +goose Up

CREATE TABLE signing_keys (
    publisher_id text NOT NULL REFERENCES publishers (id),
    kid          text NOT NULL,
    -- Ed25519: the public key and the seed of the private key.
    public_key   bytea NOT NULL CHECK (length(public_key) = 32),
    private_key  bytea NOT NULL CHECK (length(private_key) = 32),
    created_at   timestamptz NOT NULL,
    retired_at   timestamptz,
    PRIMARY KEY (publisher_id, kid),
    CONSTRAINT signing_keys_retired_after_created CHECK (retired_at IS NULL OR retired_at >= created_at)
);
CREATE UNIQUE INDEX signing_keys_active ON signing_keys (publisher_id) WHERE retired_at IS NULL;

-- +goose Down

DROP TABLE signing_keys;
