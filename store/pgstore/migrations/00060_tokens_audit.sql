-- Tokens with a lifecycle, and the admin audit trail.
--
-- admin_tokens and buyer_tokens become one table, tokens, whose rows carry
-- a public id, the secret's prefix, who made them, their last use, expiry,
-- revocation and rotation links. The old tables are dropped rather than
-- kept beside it: a replica still running the previous release then fails
-- to authenticate anyone (closed) instead of accepting a token this
-- release revoked (open). Upgrade every replica together.

-- +goose Up

CREATE TABLE tokens (
    -- The digest is the key across every publisher and both kinds: a
    -- create that collides is refused, never turned into an update, so
    -- no token's scope can be changed by making another.
    digest       text PRIMARY KEY CHECK (digest ~ '^[0-9a-f]{64}$'),
    id           text NOT NULL UNIQUE,
    publisher_id text NOT NULL REFERENCES publishers (id),
    kind         text NOT NULL CHECK (kind IN ('admin', 'buyer')),
    name         text NOT NULL,
    -- prefix is the start of the secret, to recognise a leaked one by;
    -- empty for tokens made before it was kept.
    prefix       text NOT NULL DEFAULT '',
    -- The buyer principal a buyer token speaks for.
    buyer_id     text NOT NULL DEFAULT '',
    operator     text NOT NULL DEFAULT '',
    accounts     text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL,
    created_by   text NOT NULL DEFAULT '',
    last_used_at timestamptz,
    expires_at   timestamptz,
    revoked_at   timestamptz,
    replaces     text NOT NULL DEFAULT '',
    replaced_by  text NOT NULL DEFAULT '',
    CONSTRAINT tokens_admin_has_no_buyer CHECK (kind = 'buyer' OR (buyer_id = '' AND operator = '' AND accounts = '{}'))
);
CREATE INDEX tokens_publisher ON tokens (publisher_id, created_at, id);

-- Existing tokens keep working. Their ids are fresh random names; their
-- prefixes are unknown, since only digests were kept.
INSERT INTO tokens (digest, id, publisher_id, kind, name, created_at)
SELECT digest, 'tok_' || substr(md5(random()::text || clock_timestamp()::text || digest), 1, 16),
       publisher_id, 'admin', name, created_at
FROM admin_tokens;
-- A buyer digest that is also an admin digest (the same secret given to
-- both) stays an admin token only.
INSERT INTO tokens (digest, id, publisher_id, kind, name, buyer_id, operator, accounts, created_at)
SELECT digest, 'tok_' || substr(md5(random()::text || clock_timestamp()::text || digest || publisher_id), 1, 16),
       publisher_id, 'buyer', buyer_id, buyer_id, operator, accounts, created_at
FROM buyer_tokens
ON CONFLICT DO NOTHING;

DROP TABLE admin_tokens;
DROP TABLE buyer_tokens;

-- Each publisher's audit trail is a hash chain like its ledger: audit_heads
-- holds the head, and appends lock that row, so every replica appends to
-- one chain in turn.
CREATE TABLE audit_heads (
    publisher_id text PRIMARY KEY REFERENCES publishers (id),
    sequence     bigint NOT NULL DEFAULT 0,
    hash         text NOT NULL DEFAULT '0000000000000000000000000000000000000000000000000000000000000000',
    at           timestamptz
);

-- audit_entries holds the fields audit.Entry.Canonical covers. detail is
-- the JSON text of the detail map, kept byte for byte.
CREATE TABLE audit_entries (
    publisher_id text NOT NULL REFERENCES publishers (id),
    sequence     bigint NOT NULL CHECK (sequence >= 1),
    at           timestamptz NOT NULL,
    actor        text NOT NULL,
    token_id     text NOT NULL,
    action       text NOT NULL,
    target       text NOT NULL,
    detail       text NOT NULL,
    address      text NOT NULL,
    prev_hash    text NOT NULL,
    hash         text NOT NULL,
    PRIMARY KEY (publisher_id, sequence)
);
-- A token's last actions, and what was done to it.
CREATE INDEX audit_entries_token ON audit_entries (publisher_id, token_id, sequence);
CREATE INDEX audit_entries_target ON audit_entries (publisher_id, target, sequence);

-- +goose Down

DROP TABLE audit_entries;
DROP TABLE audit_heads;

CREATE TABLE buyer_tokens (
    publisher_id text NOT NULL REFERENCES publishers (id),
    digest       text NOT NULL CHECK (digest ~ '^[0-9a-f]{64}$'),
    buyer_id     text NOT NULL,
    operator     text NOT NULL,
    accounts     text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (publisher_id, digest)
);

CREATE TABLE admin_tokens (
    digest       text PRIMARY KEY CHECK (digest ~ '^[0-9a-f]{64}$'),
    publisher_id text NOT NULL REFERENCES publishers (id),
    name         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- Revoked and expired tokens are not carried back: the old release could
-- not refuse them.
INSERT INTO admin_tokens (digest, publisher_id, name, created_at)
SELECT digest, publisher_id, name, created_at FROM tokens
WHERE kind = 'admin' AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now());
INSERT INTO buyer_tokens (publisher_id, digest, buyer_id, operator, accounts, created_at)
SELECT publisher_id, digest, buyer_id, operator, accounts, created_at FROM tokens
WHERE kind = 'buyer' AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now());

DROP TABLE tokens;
