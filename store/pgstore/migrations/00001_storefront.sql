-- The storefront's schema: publishers (the tenants) and everything they own.
-- Every table but admin_tokens is keyed by publisher first, so that no query
-- can reach another publisher's rows without naming it.

-- +goose Up

CREATE TABLE publishers (
    id                text PRIMARY KEY,
    -- position keeps the order publishers were added in: the first one
    -- added is the default and is listed first.
    position          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    -- settings is the products.Publisher document, so a new setting needs
    -- no migration.
    settings          jsonb NOT NULL,
    -- catalogue_version counts catalogue edits; rulebook_version is the
    -- newest row of rulebook_versions (0: none). Both only ever grow, and
    -- the compare-and-set on them is how If-Match is enforced.
    catalogue_version bigint NOT NULL DEFAULT 0 CHECK (catalogue_version >= 0),
    rulebook_version  bigint NOT NULL DEFAULT 0 CHECK (rulebook_version >= 0),
    created_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE products (
    publisher_id text NOT NULL REFERENCES publishers (id),
    product_id   text NOT NULL,
    -- position is catalogue order: insertion order, kept on replace.
    position     bigint GENERATED ALWAYS AS IDENTITY,
    -- json, not jsonb: format params are raw JSON the publisher wrote and
    -- buyers receive; json keeps their key order byte for byte.
    body         json NOT NULL,
    PRIMARY KEY (publisher_id, product_id)
);
CREATE INDEX products_catalogue_order ON products (publisher_id, position);

-- Rulebook versions are immutable: rows are inserted, never updated.
CREATE TABLE rulebook_versions (
    publisher_id text NOT NULL REFERENCES publishers (id),
    version      bigint NOT NULL CHECK (version >= 1),
    rulebook     jsonb NOT NULL,
    author       text NOT NULL,
    note         text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (publisher_id, version)
);

CREATE TABLE accounts (
    publisher_id text NOT NULL REFERENCES publishers (id),
    id           text NOT NULL,
    operator     text NOT NULL,
    brand_domain text NOT NULL,
    brand_id     text NOT NULL DEFAULT '',
    sandbox      boolean NOT NULL,
    disclosure   text NOT NULL CHECK (disclosure IN ('none', 'category', 'range', 'exact')),
    -- natural_key is store.Account.NaturalKey(), computed by the
    -- storefront; it includes the sandbox flag.
    natural_key  text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (publisher_id, id),
    CONSTRAINT accounts_natural_key UNIQUE (publisher_id, natural_key)
);

-- Tokens are SHA-256 digests in hex; the check keeps a raw token from ever
-- being stored by mistake.
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

-- ledger_heads holds each publisher's chain head. Appends lock this one row
-- (SELECT ... FOR UPDATE), so every replica appends to one chain in turn.
CREATE TABLE ledger_heads (
    publisher_id text PRIMARY KEY REFERENCES publishers (id),
    sequence     bigint NOT NULL DEFAULT 0,
    hash         text NOT NULL DEFAULT '0000000000000000000000000000000000000000000000000000000000000000',
    -- at is the newest entry's time: entry times never go backwards even
    -- when replicas' clocks disagree.
    at           timestamptz
);

-- ledger_entries holds the canonical fields ledger.Entry.ComputeHash
-- covers; at is microsecond precision, as ledger.Next truncates to.
CREATE TABLE ledger_entries (
    publisher_id     text NOT NULL REFERENCES publishers (id),
    sequence         bigint NOT NULL CHECK (sequence >= 1),
    at               timestamptz NOT NULL,
    account          text NOT NULL,
    principal        text NOT NULL,
    request_digest   text NOT NULL,
    rulebook_version bigint NOT NULL,
    arm              text NOT NULL,
    slug             text NOT NULL,
    rule_ids         text[] NOT NULL,
    response_digest  text NOT NULL,
    sandbox          boolean NOT NULL,
    forced           boolean NOT NULL,
    prev_hash        text NOT NULL,
    hash             text NOT NULL,
    PRIMARY KEY (publisher_id, sequence)
);
CREATE INDEX ledger_entries_account ON ledger_entries (publisher_id, account, sequence);

-- One pending directive per (publisher, account, principal); taking it
-- deletes it.
CREATE TABLE directives (
    publisher_id text NOT NULL REFERENCES publishers (id),
    account      text NOT NULL,
    principal    text NOT NULL,
    arm          text NOT NULL,
    reason       text NOT NULL DEFAULT '',
    suggestions  text[] NOT NULL DEFAULT '{}',
    task_id      text NOT NULL DEFAULT '',
    message      text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (publisher_id, account, principal)
);

-- +goose Down

DROP TABLE directives;
DROP TABLE ledger_entries;
DROP TABLE ledger_heads;
DROP TABLE admin_tokens;
DROP TABLE buyer_tokens;
DROP TABLE accounts;
DROP TABLE rulebook_versions;
DROP TABLE products;
DROP TABLE publishers;
